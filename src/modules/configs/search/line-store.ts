/**
 * The configuration texts searches have read, as the fleet's distinct lines and, per text, the ids of its lines.
 * Lines repeat massively across a fleet and its history (the template every device shares, every line an edit
 * left alone): 9,984 versions of 30 KB hold 8.2 million lines but fewer than half a million distinct ones. A
 * search tests each distinct line once, however many versions hold it, then walks the versions' id lists.
 *
 * Distinct lines are kept in chunks, each one string of lines ending in "\n" with where each line starts, so a
 * search finds its fixed text with one string search per chunk rather than a call per line. Chunks are tested
 * when a search first meets one of their lines, so a search over a few versions tests a few chunks. A line in a
 * chunk has no string of its own (one is cut from the chunk when it is shown): half a million strings were half
 * a million objects for every major garbage collection to mark, which in a search after the store filled took
 * 10-20 ms more for several searches.
 *
 * Texts are kept by blob hash, which names one text for good: an entry is never stale, whatever happens to the
 * stored blob. The store's memory is bounded (see `over`): versions go about least recently used first; lines cannot be
 * dropped one by one (ids must stay put), so a store whose lines alone fill half the budget is replaced whole
 * (see currentLineStore).
 */
import type { LineSource, RunText } from "../storage/line-runs.ts";
import type { Chunk, ChunkedLines } from "./line-chunks.ts";
import type { TermLines } from "./line-marks.ts";

/** Lines per chunk at most: a chunk is tested whole, so this is what a search over one version tests per chunk it meets. */
const CHUNK_LINES = 512;
/** What one distinct line costs beyond its characters: its string's header and its places in the arrays and the table. */
const LINE_OVERHEAD = 64;
const VERSION_OVERHEAD = 96;
/** What a text rebuilt from a delta counts while it waits to be added. */
const DELTA_CHARS = 2048;
/** How long adding waits for running searches to finish before it looks again. */
const IDLE_WAIT_MS = 5;
/** How long one turn of adding queued texts' lines may hold the event loop. */
const TURN_MS = 5;
/** Terms whose matching lines are kept (a byte per line each). */
const KEPT_TERMS = 16;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * Lines are found by a hash table of their own (ids in open addressing, each line's hash kept): hashing a line in
 * place costs one pass over its characters and makes no string, where a Map keyed by lines would need each line
 * of every text read cut out as a string first, most of them to be thrown away as already known.
 */
export class LineStore implements ChunkedLines {
  /** The lines added since the last chunk was sealed (ids from sealedCount on). */
  private pending: string[] = [];
  private hashes = new Int32Array(1024);
  /** Line id + 1 by hash, open addressing; 0 is empty. At most half full. */
  private table = new Int32Array(4096);
  private readonly chunkList: Chunk[] = [];
  /** Chunk index of each line id, for the ids sealed into chunks. */
  private chunkIndex = new Uint32Array(1024);
  private sealedCount = 0;
  private lineChars = 0;
  /** Kept versions' line ids, oldest kept first; `used`: read since kept, or since last spared (see keep). */
  private readonly versions = new Map<string, { ids: Uint32Array; used: boolean }>();
  private versionBytes = 0;
  private readonly terms = new Map<string, TermLines>();
  /** Texts read, waiting for their lines to be added (see later()). */
  private queue: { hash: string; text: RunText }[] = [];
  private queuedChars = 0;
  private interner?: RunInterner;
  private adding?: Promise<void>;

  constructor(readonly budget: number) {}

  /** Distinct lines held (the next new line's id). */
  get lineCount(): number {
    return this.sealedCount + this.pending.length;
  }

  get chunks(): readonly Chunk[] {
    return this.chunkList;
  }

  /** The chunk a sealed line is in. */
  chunkOf(id: number): number {
    return this.chunkIndex[id]!;
  }

  /** Estimated bytes held: lines, their bookkeeping and the versions' id lists. */
  get bytes(): number {
    return this.linesBytes + this.versionBytes;
  }

  /** Estimated bytes of the lines alone: they are never dropped, and at half the budget the store is replaced. */
  get linesBytes(): number {
    return this.lineChars + this.lineCount * LINE_OVERHEAD;
  }

  /** Whether the lines alone fill half the budget: then keeping versions would mean evicting them as soon as read. */
  get full(): boolean {
    return this.linesBytes > this.budget / 2;
  }

  /** The id of a line, added if new. */
  intern(line: string): number {
    return this.internAt(line, 0, line.length);
  }

  /** The id of the line `text` holds from `start` to `end`, added if new. */
  internAt(text: string, start: number, end: number): number {
    const ids = new Int32Array(1).fill(-1);
    this.internLines(text, Uint32Array.of(start, end + 1), 0, 1, end, ids);
    return ids[0]!;
  }

  /**
   * Interns lines `first` to `first + count - 1` of a text whose lines start at `starts` (the last one ends at
   * `textEnd`), writing their ids into `ids` where it holds -1. One loop, for it runs over every line read.
   */
  internLines(
    text: string,
    starts: ArrayLike<number>,
    first: number,
    count: number,
    textEnd: number,
    ids: Int32Array,
  ): void {
    const lastLine = starts.length - 1;
    for (let line = first, stop = first + count; line < stop; line++) {
      if (ids[line]! >= 0) continue;
      const start = starts[line]!;
      const end = line < lastLine ? starts[line + 1]! - 1 : textEnd;
      let hash = FNV_OFFSET;
      for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
      hash |= 0;
      const table = this.table;
      const hashes = this.hashes;
      const mask = table.length - 1;
      let id = -1;
      for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
        const entry = table[slot]!;
        if (entry === 0) break;
        if (hashes[entry - 1] === hash && this.holds(entry - 1, text, start, end)) {
          id = entry - 1;
          break;
        }
      }
      ids[line] = id >= 0 ? id : this.add(text.slice(start, end), hash);
    }
  }

  /** Whether line `id` is the text from `start` to `end`. */
  private holds(id: number, text: string, start: number, end: number): boolean {
    if (id >= this.sealedCount) {
      const line = this.pending[id - this.sealedCount]!;
      return line.length === end - start && text.startsWith(line, start);
    }
    const chunk = this.chunkList[this.chunkIndex[id]!]!;
    const k = id - chunk.firstId;
    const from = chunk.starts[k]!;
    if (chunk.starts[k + 1]! - 1 - from !== end - start) return false;
    const lines = chunk.text;
    for (let i = 0; i < end - start; i++) if (lines.charCodeAt(from + i) !== text.charCodeAt(start + i)) return false;
    return true;
  }

  private add(line: string, hash: number): number {
    const id = this.lineCount;
    this.pending.push(line);
    this.lineChars += line.length;
    if (this.hashes.length <= id) {
      const grown = new Int32Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[id] = hash;
    if (this.lineCount * 2 > this.table.length) this.rehash();
    else this.place(id);
    if (this.pending.length >= CHUNK_LINES) this.seal();
    return id;
  }

  private place(id: number) {
    const mask = this.table.length - 1;
    let slot = this.hashes[id]! & mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & mask;
    this.table[slot] = id + 1;
  }

  private rehash() {
    this.table = new Int32Array(this.table.length * 2);
    for (let id = 0; id < this.lineCount; id++) this.place(id);
  }

  /**
   * Puts the lines added since the last call into a chunk. (A new line may be a slice of the text it came from,
   * which keeps that whole text alive until then.)
   */
  seal(): void {
    const firstId = this.sealedCount;
    const count = this.pending.length;
    if (!count) return;
    const starts = new Uint32Array(count + 1);
    for (let k = 0, at = 0; k < count; k++) {
      starts[k] = at;
      at += this.pending[k]!.length + 1;
    }
    const text = this.pending.join("\n") + "\n";
    starts[count] = text.length;
    const index = this.chunkList.length;
    this.chunkList.push({ firstId, text, starts });
    if (this.chunkIndex.length < firstId + count) {
      const grown = new Uint32Array(Math.max(this.chunkIndex.length * 2, firstId + count));
      grown.set(this.chunkIndex);
      this.chunkIndex = grown;
    }
    this.chunkIndex.fill(index, firstId, firstId + count);
    this.pending = [];
    this.sealedCount = firstId + count;
  }

  /** The text of a line. */
  line(id: number): string {
    if (id >= this.sealedCount) return this.pending[id - this.sealedCount]!;
    const chunk = this.chunkList[this.chunkIndex[id]!]!;
    const k = id - chunk.firstId;
    return chunk.text.slice(chunk.starts[k]!, chunk.starts[k + 1]! - 1);
  }

  /** A kept text's line ids, marked as used. */
  version(hash: string): Uint32Array | undefined {
    const kept = this.versions.get(hash);
    if (!kept) return undefined;
    kept.used = true;
    return kept.ids;
  }

  /**
   * Keeps a text's line ids. While the store is over its budget, versions go oldest first, but one used since it
   * was kept or last spared is spared once more and counts as new (a clock, nearly least recently used): a
   * search reads thousands of versions, and moving each to the back of the order as it read them took a broad
   * search a millisecond.
   */
  keep(hash: string, ids: Uint32Array): void {
    const old = this.versions.get(hash);
    if (old) {
      this.versions.delete(hash);
      this.versionBytes -= old.ids.byteLength + VERSION_OVERHEAD;
    }
    this.versions.set(hash, { ids, used: false });
    this.versionBytes += ids.byteLength + VERSION_OVERHEAD;
    for (const [oldest, kept] of this.versions) {
      if (this.bytes <= this.budget) break;
      this.versions.delete(oldest);
      if (kept.used) {
        kept.used = false;
        this.versions.set(oldest, kept); // met again at the end of this walk, if it comes to that
      } else this.versionBytes -= kept.ids.byteLength + VERSION_OVERHEAD;
    }
  }

  /**
   * Which lines match a term, by the term's key: kept for the last KEPT_TERMS terms, so the next page of a
   * search, or a search refined by another term, tests again only lines it has not met.
   */
  termLines(key: string, make: () => TermLines): TermLines {
    let lines = this.terms.get(key);
    if (lines) this.terms.delete(key);
    else lines = make();
    this.terms.set(key, lines);
    for (const oldest of this.terms.keys()) {
      if (this.terms.size <= KEPT_TERMS) break;
      this.terms.delete(oldest);
    }
    return lines;
  }

  /**
   * Adds a text just read to the store in the background, a few milliseconds of each turn of the event loop:
   * a search that read it has checked it already, and adding costs several times more than that check (hashing
   * every line), so searches over texts read since a start run at the speed of reading them, and the ones after
   * from the store. Texts waiting hold up to a quarter of the budget; beyond that they are not kept. (A version
   * rebuilt from a delta holds its own lines and shares the rest with its newer version: it is counted as the
   * few KB a delta adds, not as its whole length.)
   */
  later(hash: string, text: RunText): void {
    const chars = text.whole ? text.length : DELTA_CHARS;
    if (this.versions.has(hash) || this.queuedChars + chars > this.budget / 4) return;
    this.queue.push({ hash, text });
    this.queuedChars += chars;
    this.adding ??= this.addQueued();
  }

  /** Lets go of the texts waiting: the store was replaced. */
  dropQueue(): void {
    this.queue = [];
    this.queuedChars = 0;
  }

  /** Resolves once the texts waiting have been added (or dropped with the store). */
  settled(): Promise<void> {
    return this.adding ?? Promise.resolve();
  }

  private async addQueued(): Promise<void> {
    let next = 0;
    while (next < this.queue.length) {
      // Only while no search runs: adding is for the searches after, not to slow the ones that read the texts.
      await untilNoSearchRuns();
      if (current !== this) break; // replaced: nothing will read this store again
      const until = performance.now() + TURN_MS;
      this.interner ??= new RunInterner(this);
      while (next < this.queue.length && performance.now() < until) {
        const { hash, text } = this.queue[next++]!;
        if (!this.versions.has(hash)) this.keep(hash, this.interner.idsOf(text));
      }
      this.seal();
    }
    this.queue = [];
    this.queuedChars = 0;
    this.adding = undefined;
  }

  get versionCount(): number {
    return this.versions.size;
  }
}

/**
 * Line ids of texts read as runs of lines (line-runs.ts), for one store: each source's lines are interned once,
 * when a run first uses them, so an older version rebuilt from a newer one's lines costs only its own new lines.
 */
export class RunInterner {
  private readonly sources = new WeakMap<LineSource, Int32Array>();
  constructor(readonly store: LineStore) {}

  /**
   * The ids of the text's lines, as search numbers them: the empty piece after a final "\n" is no line, and an
   * empty text is one empty line.
   */
  idsOf(text: RunText): Uint32Array {
    const runs = text.runs;
    const last = runs.at(-1)!;
    const lastEmpty =
      last.source.lineStarts()[last.first + last.count - 1] === last.source.lineEnd(last.first + last.count - 1);
    let total = runs.reduce((n, r) => n + r.count, 0);
    if (total > 1 && lastEmpty) total--;
    const out = new Uint32Array(total);
    let at = 0;
    for (const run of runs) {
      const ids = this.sourceIds(run.source);
      const count = Math.min(run.count, total - at);
      this.store.internLines(run.source.text, run.source.lineStarts(), run.first, count, run.source.text.length, ids);
      for (let k = 0; k < count; k++) out[at++] = ids[run.first + k]!;
    }
    return out;
  }

  private sourceIds(source: LineSource): Int32Array {
    let ids = this.sources.get(source);
    if (!ids) this.sources.set(source, (ids = new Int32Array(source.lineCount).fill(-1)));
    return ids;
  }
}

/**
 * The store searches share. Replaced whole when its lines fill half its budget (LineStore.full); a search that
 * started on the old one keeps it until its next batch, so ids never mix between stores.
 */
let current: LineStore | undefined;
/** Estimated bytes: the bench's fleet (2,000 devices x 5 versions of 30 KB) and all its history fit. */
export const LINE_STORE_BUDGET = 160 * 1024 * 1024;

export function currentLineStore(): LineStore {
  if (!current || current.full) {
    current?.dropQueue();
    current = new LineStore(LINE_STORE_BUDGET);
  }
  return current;
}

/** Searches running now: texts read wait to be added until there are none. */
let running = 0;

/** Resolves on a later turn of the event loop at which no search runs: work for the searches after waits for it. */
export async function untilNoSearchRuns(): Promise<void> {
  do await new Promise((resolve) => setTimeout(resolve, running ? IDLE_WAIT_MS : 0));
  while (running > 0);
}

/** Runs a search, holding back the adding of texts read until no search runs. */
export async function whileSearching<T>(search: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await search();
  } finally {
    running--;
  }
}

/** Drops every kept line and text (benchmarks measure searches that read every text from the database). */
export function clearLineStore(): void {
  current?.dropQueue();
  current = undefined;
}

/** Resolves once texts searches read have been added to the store (tests and benchmarks wait for it). */
export function lineStoreSettled(): Promise<void> {
  return current?.settled() ?? Promise.resolve();
}
