/**
 * One configuration text as an evaluation reads it: split into lines once (as offsets, not strings), and for
 * a matcher the sorted list of lines it matches (the evaluation keeps it for every rule and section that asks).
 * A question about a range of lines (a section's body) is then a binary search, not a rescan.
 */
import type { LiteralScanner, TextIndex } from "./literal-scan.ts";
import type { LineMatcher } from "./matchers.ts";

export class ConfigText {
  readonly text: string;
  readonly lineCount: number;
  /** starts[i]: offset of line i; starts[lineCount]: one past the end (the offset after a final "\n"). */
  private readonly starts: Int32Array;
  private readonly lines: (string | undefined)[];
  private readonly literalLines: TextIndex | null;

  /** With a scanner, the lines and its literals' lines are found in one pass; other literals are searched one by one. */
  constructor(text: string, scanner: LiteralScanner | null = null) {
    this.text = text;
    if (scanner) {
      const index = scanner.index(text);
      this.lineCount = index.lineCount;
      this.starts = index.starts;
      this.literalLines = index;
    } else {
      let count = 0;
      for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
      const trailing = text.length > 0 && !text.endsWith("\n");
      this.lineCount = count + (trailing ? 1 : 0);
      this.starts = new Int32Array(this.lineCount + 1);
      let line = 1;
      for (let at = text.indexOf("\n"); at >= 0 && line <= this.lineCount; at = text.indexOf("\n", at + 1))
        this.starts[line++] = at + 1;
      this.starts[this.lineCount] = text.length + (trailing ? 1 : 0);
      this.literalLines = null;
    }
    this.lines = new Array(this.lineCount); // sized up front: filled out of order, it must not turn into a dictionary
  }

  /** Offset of line i's first character. */
  start(i: number): number {
    return this.starts[i]!;
  }

  /** Offset just past line i's last character ("\r" and "\n" excluded). */
  end(i: number): number {
    let e = this.starts[i + 1]! - 1;
    if (e > this.starts[i]! && this.text.charCodeAt(e - 1) === 13) e--;
    return e;
  }

  /** Line i (0-based) without its line ending. */
  line(i: number): string {
    return (this.lines[i] ??= this.text.slice(this.starts[i]!, this.end(i)));
  }

  /**
   * The 0-based lines `m` matches, ascending, worked out anew (the evaluation keeps them). `literalId`: its
   * literal's id in the scanner (literal-scan.ts), or -1 when the scanner does not find it.
   */
  hits(m: LineMatcher, literalId: number): Int32Array {
    if (literalId >= 0) return this.filter(this.literalLines!.linesOf(literalId), m);
    return m.literal === null ? this.scanAll(m) : this.scanLiteral(m.literal, m.test);
  }

  private filter(lines: Int32Array, m: LineMatcher): Int32Array {
    const { test, testAt } = m;
    if (test === null) return lines;
    const out: number[] = [];
    if (testAt) {
      for (const i of lines) if (testAt(this.text, this.starts[i]!, this.end(i))) out.push(i);
    } else {
      for (const i of lines) if (test(this.line(i))) out.push(i);
    }
    return Int32Array.from(out);
  }

  private scanAll(m: LineMatcher): Int32Array {
    const { test, testAt } = m;
    const out: number[] = [];
    for (let i = 0; i < this.lineCount; i++) {
      if (testAt ? testAt(this.text, this.starts[i]!, this.end(i)) : test!(this.line(i))) out.push(i);
    }
    return Int32Array.from(out);
  }

  private scanLiteral(literal: string, test: ((line: string) => boolean) | null): Int32Array {
    const out: number[] = [];
    let line = 0;
    for (let at = this.text.indexOf(literal); at >= 0; ) {
      while (this.starts[line + 1]! <= at) line++;
      // a literal that runs past the line's end ("\r\n" or "\n" in it) cannot be a line's content
      if (at + literal.length <= this.end(line) && (test === null || test(this.line(line)))) out.push(line);
      if (line + 1 >= this.lineCount) break;
      at = this.text.indexOf(literal, this.starts[line + 1]!);
    }
    return Int32Array.from(out);
  }
}

/** Index of the first entry of ascending `hits` that is >= `from`. */
export function lowerBound(hits: Int32Array, from: number): number {
  let lo = 0;
  let hi = hits.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (hits[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first of `hits` in [from, to), or -1. */
export function firstIn(hits: Int32Array, from: number, to: number): number {
  const i = lowerBound(hits, from);
  return i < hits.length && hits[i]! < to ? hits[i]! : -1;
}

/** The `hits` in [from, to). */
export function allIn(hits: Int32Array, from: number, to: number): Int32Array {
  return hits.subarray(lowerBound(hits, from), lowerBound(hits, to));
}
