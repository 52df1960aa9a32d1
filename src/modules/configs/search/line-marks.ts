/**
 * Which of a line store's distinct lines match which terms of one search (line-store.ts): a bit per term for
 * each line id. A chunk of lines is tested the first time the search meets one of its lines, and once: every
 * version holding a line then reads the answer. A search that walks a few versions tests the few chunks their
 * lines are in; one that walks the whole fleet tests every chunk, one string search per chunk and anchor.
 */
import type { ChunkedLines } from "./line-chunks.ts";

/** The store a search's terms are marked in: its lines, and the matches it keeps per term (LineStore). */
type MarkedStore = ChunkedLines & { termLines(key: string, make: () => TermLines): TermLines };

/**
 * `test` decides, on the line alone. `anchors`, when known, are texts every line the term matches contains
 * (a string: found as it is; a RegExp with the g flag: found in any case): only lines holding one are tested.
 */
export type MarkTerm = { test: { test(line: string): boolean }; anchors: (string | RegExp)[] | null };

/** Where an anchor next occurs in the text from `from` on, or -1. */
export function findAnchor(anchor: string | RegExp, text: string, from: number): number {
  if (typeof anchor === "string") return text.indexOf(anchor, from);
  anchor.lastIndex = from;
  return anchor.exec(text)?.index ?? -1;
}

/** The line of a chunk that the character at `offset` is on. */
function lineAt(starts: Uint32Array, offset: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Which lines of a store match one term. Kept by the store under the term's key (LineStore.termLines), so the
 * next page of a search, or the same term in another search, tests no chunk again: a chunk never changes once
 * sealed, and new chunks are tested when first met.
 */
export class TermLines {
  /** Per line id: 0 not tested yet, MATCH or NO_MATCH once its chunk is. */
  private verdicts = new Uint8Array(0);
  private tested = new Uint8Array(0);
  /** Lines the arrays cover: all sealed into chunks when last grown. */
  private known = 0;

  constructor(
    readonly store: ChunkedLines,
    private readonly term: MarkTerm,
  ) {}

  /** Whether the line matches the term. */
  has(id: number): boolean {
    const verdict = this.verdicts[id];
    return verdict ? verdict === MATCH : this.test(id);
  }

  /** The verdict of a line not tested yet: its chunk's lines are tested now. */
  private test(id: number): boolean {
    const chunk = id < this.known ? this.store.chunkOf(id) : this.grow(id);
    if (!this.tested[chunk]) this.testChunk(chunk);
    return this.verdicts[id] === MATCH;
  }

  /** Where in the last version that had one the walk found a matching line (hasAny). */
  private lastFound = 0;

  /**
   * Whether some of the lines match: the walk over every version of a broad search, so tight. It looks outward
   * from where the last version had its match, each line once: a fleet's configurations hold a line at about the
   * same place (snmp-server after the interfaces), so for a term every version holds, a version is decided in a
   * few looks instead of the several hundred from its first line.
   */
  hasAny(ids: Uint32Array): boolean {
    const n = ids.length;
    let up = Math.min(this.lastFound, n);
    let down = up - 1;
    while (up < n || down >= 0) {
      if (up < n) {
        if (this.has(ids[up]!)) return ((this.lastFound = up), true);
        up++;
      }
      if (down >= 0) {
        if (this.has(ids[down]!)) return ((this.lastFound = down), true);
        down--;
      }
    }
    return false;
  }

  /** The indexes of the lines that match, in order: the lines a page shows, so as tight as hasAny. */
  matchingIndexes(ids: Uint32Array): number[] {
    const out: number[] = [];
    for (let k = 0; k < ids.length; k++) if (this.has(ids[k]!)) out.push(k);
    return out;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.verdicts.byteLength + this.tested.byteLength;
  }

  /** Room for the store's lines as they are now, all sealed into chunks; the chunk of `id`. */
  private grow(id: number): number {
    this.store.seal();
    const count = this.store.lineCount;
    if (id >= count) throw new Error(`line ${id} is not in the store`);
    if (this.verdicts.length < count) {
      const verdicts = new Uint8Array(Math.max(count, this.verdicts.length * 2));
      verdicts.set(this.verdicts);
      this.verdicts = verdicts;
    }
    if (this.tested.length < this.store.chunks.length) {
      const tested = new Uint8Array(Math.max(this.store.chunks.length, this.tested.length * 2));
      tested.set(this.tested);
      this.tested = tested;
    }
    this.known = count;
    return this.store.chunkOf(id);
  }

  private testChunk(index: number) {
    const { text, starts, firstId } = this.store.chunks[index]!;
    const { test, anchors } = this.term;
    const verdicts = this.verdicts;
    const lines = starts.length - 1;
    const lineText = (k: number) => text.slice(starts[k]!, starts[k + 1]! - 1);
    if (!anchors) {
      for (let k = 0; k < lines; k++) verdicts[firstId + k] = test.test(lineText(k)) ? MATCH : NO_MATCH;
    } else {
      for (const anchor of anchors) {
        // Each hit's line is tested once; the search goes on from the next line.
        for (let at = findAnchor(anchor, text, 0); at >= 0; ) {
          const k = lineAt(starts, at);
          if (!verdicts[firstId + k]) verdicts[firstId + k] = test.test(lineText(k)) ? MATCH : NO_MATCH;
          const next = starts[k + 1]!;
          at = next < text.length ? findAnchor(anchor, text, next) : -1;
        }
      }
      for (let k = 0; k < lines; k++) verdicts[firstId + k] ||= NO_MATCH;
    }
    this.tested[index] = 1;
  }
}

const MATCH = 1;
const NO_MATCH = 2;

/** The terms of one search over one store, as bits (term i is bit i). */
export class LineMarks {
  private readonly lines: TermLines[];
  /** Bits of every term. */
  readonly all: number;

  /** `key` names what a term matches (its text, and whether it is a regex and minds case): equal keys, equal lines. */
  constructor(
    readonly store: MarkedStore,
    terms: readonly { key: string; term: MarkTerm }[],
  ) {
    if (terms.length > 16) throw new Error("a search has at most 16 terms");
    this.lines = terms.map(({ key, term }) => store.termLines(key, () => new TermLines(store, term)));
    this.all = (1 << terms.length) - 1;
  }

  /** The terms (as bits) the line matches. */
  of(id: number): number {
    if (this.lines.length === 1) return this.lines[0]!.has(id) ? 1 : 0;
    let bits = 0;
    for (let t = 0; t < this.lines.length; t++) if (this.lines[t]!.has(id)) bits |= 1 << t;
    return bits;
  }

  /** The lines that match some term, by index, with the terms (as indexes) each matches. */
  matchedLines(ids: Uint32Array): { index: number; terms: number[] }[] {
    if (this.lines.length === 1) return this.lines[0]!.matchingIndexes(ids).map((index) => ({ index, terms: [0] }));
    const matched: { index: number; terms: number[] }[] = [];
    for (let k = 0; k < ids.length; k++) {
      const bits = this.of(ids[k]!);
      if (!bits) continue;
      const terms: number[] = [];
      for (let t = 0; 1 << t <= bits; t++) if (bits & (1 << t)) terms.push(t);
      matched.push({ index: k, terms });
    }
    return matched;
  }

  /**
   * Whether the lines match as a configuration: "all" when every term matches some line, "any" when one does.
   * Stops at the first line that decides it.
   */
  matches(ids: Uint32Array, match: "all" | "any"): boolean {
    if (this.lines.length === 1) return this.lines[0]!.hasAny(ids);
    let seen = 0;
    for (let k = 0; k < ids.length; k++) {
      seen |= this.of(ids[k]!);
      if (match === "all" ? seen === this.all : seen !== 0) return true;
    }
    return false;
  }
}
