/**
 * Finds the lines containing each of a policy's literals in ONE pass over a configuration (Aho-Corasick over
 * ASCII), instead of one indexOf pass per literal: a 50-rule policy has about 45 distinct literals, and
 * scanning a 30 KB text 45 times was most of an evaluation's cost. Built once per policy.
 *
 * Literals with non-ASCII characters, and those past MAX_STATES (a huge policy), are left out: ConfigText
 * finds those with indexOf as before. No literal contains a line break (patterns cannot), so the automaton
 * restarts at each line and a match never spans two lines.
 *
 * The automaton runs in WebAssembly (dfa-wasm.ts) over the text's UTF-8 bytes: literals are ASCII and every
 * byte of a multi-byte character is >= 0x80, in no literal, so the matches are the same as over UTF-16. The
 * bytes are cut at line starts into four stretches stepped side by side: one automaton's step waits for the
 * load of the step before it, four independent ones overlap in the CPU. Line breaks are found by a separate
 * SIMD pass; a hit's line is the number of breaks before it.
 */
import { CLASS_AT, DELTA_AT, dfaModule, STATE_AT } from "./dfa-wasm.ts";

const ALPHABET = 128;
const MAX_STATES = 20_000;
const STREAMS = 4;
/** Text scanned per window (characters): bounds the WebAssembly memory a huge configuration makes the scan take. */
const WINDOW = 1 << 18;
const NEWLINE = 10;

/** A text's lines (as ConfigText counts them) and the lines each literal occurs on. */
export class TextIndex {
  constructor(
    readonly lineCount: number,
    /** Offset of each line's first character and, last, one past the end (the offset after a final "\n"). */
    readonly starts: Int32Array,
    /** Every literal's lines, literal by literal: literal `id`'s are lines[from[id]] to lines[from[id + 1]]. */
    private readonly lines: Int32Array,
    private readonly from: Int32Array,
  ) {}
  /** The ascending 0-based lines containing the literal `id`. */
  linesOf(id: number): Int32Array {
    return this.lines.subarray(this.from[id]!, this.from[id + 1]!);
  }
}

export class LiteralScanner {
  /** The literals this scanner finds; the others are not its business. */
  readonly literals: string[] = [];
  /** Position of each literal in `literals`, and so in what index() returns as its lines. */
  readonly idOf = new Map<string, number>();
  /**
   * Transitions, `classes` per state, as dfa-wasm.ts reads them: characters are mapped to classes first (those
   * in no literal: class 0; "\n" has a class of its own, back to the start); an entry is the next state's row
   * as a byte offset (state * classes * 4). States where a literal ends are numbered last, from `endsAt` on.
   */
  private readonly delta: Int32Array;
  private readonly rowBytes: number;
  /** The first row of a state where some literal ends. */
  private readonly endsAt: number;
  /** Every byte's class times 4 (its column's byte offset in a row), as dfa-wasm.ts reads it. */
  private readonly classOf = new Int32Array(256);
  /** Per state (by its number in `delta`), the literals (indexes into `literals`) that end there, or null. */
  private readonly outputs: (number[] | null)[];

  constructor(candidates: Iterable<string>) {
    const goto: Int32Array[] = [new Int32Array(ALPHABET).fill(-1)];
    const outputs: (number[] | null)[] = [null];
    for (const literal of new Set(candidates)) {
      if (!/^[\x00-\x7f]+$/.test(literal) || goto.length + literal.length > MAX_STATES) continue;
      let s = 0;
      for (let i = 0; i < literal.length; i++) {
        const c = literal.charCodeAt(i);
        if (goto[s]![c] === -1) {
          goto[s]![c] = goto.length;
          goto.push(new Int32Array(ALPHABET).fill(-1));
          outputs.push(null);
        }
        s = goto[s]![c]!;
      }
      (outputs[s] ??= []).push(this.literals.length);
      this.idOf.set(literal, this.literals.length);
      this.literals.push(literal);
    }
    // Breadth first: each state's failure link, its outputs merged with its failure's, transitions completed.
    const fail = new Int32Array(goto.length);
    const delta = new Int32Array(goto.length * ALPHABET);
    const queue: number[] = [];
    for (let c = 0; c < ALPHABET; c++) {
      const t = goto[0]![c]!;
      delta[c] = t === -1 ? 0 : t;
      if (t !== -1) queue.push(t);
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      const f = fail[s]!;
      if (outputs[f]) outputs[s] = [...(outputs[s] ?? []), ...outputs[f]!];
      for (let c = 0; c < ALPHABET; c++) {
        const t = goto[s]![c]!;
        if (t === -1) delta[s * ALPHABET + c] = delta[f * ALPHABET + c]!;
        else {
          delta[s * ALPHABET + c] = t;
          fail[t] = delta[f * ALPHABET + c]!;
          queue.push(t);
        }
      }
    }
    // Only characters that occur in some literal need a column of their own: a smaller table stays in cache.
    const classOf = new Int32Array(ALPHABET);
    let classes = 1;
    for (const literal of this.literals)
      for (let i = 0; i < literal.length; i++) {
        const c = literal.charCodeAt(i);
        if (classOf[c] === 0) classOf[c] = classes++;
      }
    const newline = classes++;
    classOf[NEWLINE] = newline;
    const representative = new Int32Array(classes).fill(0); // class 0: any character in no literal (NUL is in none)
    for (let c = 0; c < ALPHABET; c++) {
      if (classOf[c]) representative[classOf[c]!] = c;
      this.classOf[c] = classOf[c]! * 4;
    }
    this.rowBytes = classes * 4;
    // Renumbered: states where no literal ends first (the start stays 0), then those where one does.
    const order = [...goto.keys()].sort((a, b) => Number(outputs[a] !== null) - Number(outputs[b] !== null));
    const number = new Int32Array(goto.length);
    order.forEach((s, k) => (number[s] = k));
    this.endsAt = order.findIndex((s) => outputs[s] !== null) * this.rowBytes;
    if (this.endsAt < 0) this.endsAt = goto.length * this.rowBytes; // no literal: no row is a hit
    this.delta = new Int32Array(goto.length * classes);
    for (let s = 0; s < goto.length; s++) {
      for (let k = 0; k < classes; k++) {
        const t = delta[s * ALPHABET + representative[k]!]!;
        this.delta[number[s]! * classes + k] = k === newline ? 0 : number[t]! * this.rowBytes;
      }
    }
    this.outputs = order.map((s) => outputs[s] ?? null);
  }

  /** The text's lines and each literal's lines, in one pass over its bytes. */
  index(text: string): TextIndex {
    const n = this.literals.length;
    if (last.length < n) last = new Int32Array(n);
    last.fill(-1, 0, n);
    breaks.count = 0;
    hits.count = 0;
    for (let from = 0; from < text.length; ) {
      // A window of whole lines, about WINDOW characters (at least one line, however long).
      const cut = from + WINDOW < text.length ? text.indexOf("\n", from + WINDOW) : -1;
      const to = cut < 0 ? text.length : cut + 1;
      this.scanWindow(text, from, to);
      from = to;
    }
    // Line starts: 0, the offset after each break but the last, and the end (the offset after a final "\n").
    const trailing = text.length > 0 && text.charCodeAt(text.length - 1) !== NEWLINE;
    const lineCount = breaks.count + (trailing ? 1 : 0);
    const starts = new Int32Array(lineCount + 1);
    for (let i = 1; i < lineCount; i++) starts[i] = breaks.at[i - 1]! + 1;
    starts[lineCount] = text.length + (trailing ? 1 : 0);
    // Hits (literal, line) in text order, sorted by literal by counting: each literal's lines stay ascending.
    const from = new Int32Array(n + 1);
    for (let h = 0; h < hits.count; h += 2) from[hits.at[h]! + 1]! += 1;
    for (let id = 0; id < n; id++) from[id + 1]! += from[id]!;
    const lines = new Int32Array(hits.count >> 1);
    const next = from.slice(0, n);
    for (let h = 0; h < hits.count; h += 2) lines[next[hits.at[h]!]!++] = hits.at[h + 1]!;
    return new TextIndex(lineCount, starts, lines, from);
  }

  /** Characters [from, to) of `text`, whole lines: encoded into the module's memory, scanned, hits taken in. */
  private scanWindow(text: string, from: number, to: number): void {
    const dfa = dfaModule();
    const chars = to - from;
    const textAt = DELTA_AT + this.delta.byteLength;
    // The text's bytes (and 16 zeroes the newline pass may read past them), each break's address, the hits.
    const breaksAt = textAt + ((chars * 3 + 16 + 3) & ~3);
    const hitsAt = breaksAt + chars * 3 * 4;
    const needed = hitsAt + chars * 3 * 8 + STREAMS * 8; // at most one hit (two i32) per byte
    if (dfa.memory.buffer.byteLength < needed)
      dfa.memory.grow(Math.ceil((needed - dfa.memory.buffer.byteLength) / 65536));
    const memory = dfa.memory.buffer;
    if (loaded !== this || loadedInto !== memory) {
      new Int32Array(memory, CLASS_AT, 256).set(this.classOf);
      new Int32Array(memory, DELTA_AT, this.delta.length).set(this.delta);
      loaded = this;
      loadedInto = memory;
    }
    const bytes = new Uint8Array(memory, textAt, chars * 3 + 16);
    const written = encoder.encodeInto(
      from === 0 && to === text.length ? text : text.substring(from, to),
      bytes,
    ).written;
    bytes.fill(0, written, written + 16);
    const breaksEnd = dfa.newlines(textAt, textAt + written, breaksAt);

    // Four stretches of about equal bytes, each starting at a line start (where the automaton is at its start),
    // stepped side by side for as long as the shortest lasts; what is left of each is stepped alone. Stretch k
    // writes its hits in its own buffer, so each buffer is in address order.
    const begin = new Int32Array(STREAMS + 1);
    for (let k = 1; k < STREAMS; k++) {
      const nl = bytes
        .subarray(0, written)
        .indexOf(NEWLINE, Math.max(begin[k - 1]!, Math.floor((written * k) / STREAMS)));
      begin[k] = nl < 0 ? written : nl + 1;
    }
    begin[STREAMS] = written;
    const out = new Int32Array(STREAMS);
    for (let k = 0, at = hitsAt; k < STREAMS; k++) {
      out[k] = at;
      at += (begin[k + 1]! - begin[k]!) * 8 + 8;
    }
    const hitsFrom = Int32Array.from(out);
    let steps = written;
    for (let k = 0; k < STREAMS; k++) steps = Math.min(steps, begin[k + 1]! - begin[k]!);
    const at = (k: number) => textAt + begin[k]!;
    dfa.scan4(at(0), at(1), at(2), at(3), steps, out[0]!, out[1]!, out[2]!, out[3]!, this.endsAt);
    const state = new Int32Array(memory, STATE_AT, 2 * STREAMS);
    for (let k = 0; k < STREAMS; k++)
      out[k] = dfa.scan1(at(k) + steps, at(k + 1), state[k]!, state[STREAMS + k]!, this.endsAt);

    const words = new Int32Array(memory);
    const firstBreak = breaksAt >> 2;
    const count = (breaksEnd - breaksAt) >> 2;
    const linesBefore = breaks.count;
    breaks.reserve(count);
    if (written === chars)
      for (let b = 0; b < count; b++) breaks.at[breaks.count++] = from + words[firstBreak + b]! - textAt;
    else {
      for (let b = 0, offset = from - 1; b < count; b++)
        breaks.at[breaks.count++] = offset = text.indexOf("\n", offset + 1);
    }
    // Hits in text order (stretch by stretch, each buffer in address order); each one's line counts the breaks before it.
    let b = 0;
    for (let k = 0; k < STREAMS; k++) {
      for (let e = hitsFrom[k]! >> 2, stop = out[k]! >> 2; e < stop; e += 2) {
        const address = words[e]!;
        while (b < count && words[firstBreak + b]! < address) b++;
        const line = linesBefore + b;
        for (const id of this.outputs[words[e + 1]! / this.rowBytes]!) {
          if (last[id] !== line) {
            last[id] = line;
            hits.reserve(2);
            hits.at[hits.count++] = id;
            hits.at[hits.count++] = line;
          }
        }
      }
    }
  }
}

/** An Int32Array that grows, kept from one text to the next: indexing a text allocates only what it returns. */
class Growing {
  at = new Int32Array(4096);
  count = 0;
  /** Room for `more` entries past `count`. */
  reserve(more: number): void {
    if (this.count + more <= this.at.length) return;
    const grown = new Int32Array(Math.max(this.at.length * 2, this.count + more));
    grown.set(this.at.subarray(0, this.count));
    this.at = grown;
  }
}
/** The text's line breaks (character offsets), and its hits as (literal, line) pairs; index() is never re-entered. */
const breaks = new Growing();
const hits = new Growing();
/** Per literal, the last line it was found on (a literal found twice on a line is one hit). */
let last = new Int32Array(64);

const encoder = new TextEncoder();
/** The scanner whose tables are in the module's memory (and that memory: growing it makes a new buffer). */
let loaded: LiteralScanner | null = null;
let loadedInto: ArrayBufferLike | null = null;
