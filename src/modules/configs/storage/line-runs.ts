/**
 * Texts held as runs of whole lines of other texts. A version rebuilt from a line delta (blob-delta.ts) is the
 * runs its script names, of its base and of the script itself, so rebuilding copies no characters: a search over
 * history rebuilds hundreds of versions per query and reads whole text only for the ones it shows.
 * Lines are what `\n` separates, the last (possibly empty) piece included.
 */

/** A text whose lines runs refer to; where its lines start is found once, when first asked. */
export class LineSource {
  private starts?: number[];
  constructor(readonly text: string) {}

  /** Offsets where each line starts. */
  lineStarts(): number[] {
    if (!this.starts) {
      const starts = [0];
      for (let at = this.text.indexOf("\n"); at >= 0; at = this.text.indexOf("\n", at + 1)) starts.push(at + 1);
      this.starts = starts;
    }
    return this.starts;
  }

  get lineCount(): number {
    return this.lineStarts().length;
  }

  /** Offset just past line `line`'s last character (before its "\n"). */
  lineEnd(line: number): number {
    const starts = this.lineStarts();
    return line + 1 < starts.length ? starts[line + 1]! - 1 : this.text.length;
  }

  /** The line the character at `offset` is on. */
  lineAt(offset: number): number {
    const starts = this.lineStarts();
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

export type Run = { source: LineSource; first: number; count: number };

export class RunText {
  private lazyRuns?: readonly Run[];
  /** `whole`: the text is all of this source (a stored whole text), and its runs are worked out only if asked. */
  constructor(
    runs: readonly Run[] | undefined,
    readonly whole?: LineSource,
  ) {
    this.lazyRuns = runs;
  }

  static of(text: string): RunText {
    return new RunText(undefined, new LineSource(text));
  }

  get runs(): readonly Run[] {
    return (this.lazyRuns ??= [{ source: this.whole!, first: 0, count: this.whole!.lineCount }]);
  }

  get lineCount(): number {
    return this.runs.reduce((n, r) => n + r.count, 0);
  }

  /** Characters (UTF-16 units) of the text, without building it. */
  get length(): number {
    if (this.whole) return this.whole.text.length;
    let n = this.runs.length - 1;
    for (const r of this.runs) n += r.source.lineEnd(r.first + r.count - 1) - r.source.lineStarts()[r.first]!;
    return n;
  }

  toString(): string {
    if (this.whole) return this.whole.text;
    return this.runs
      .map((r) => r.source.text.slice(r.source.lineStarts()[r.first]!, r.source.lineEnd(r.first + r.count - 1)))
      .join("\n");
  }
}

/** Appends a run, joining it to the last one when it continues it. */
function push(runs: Run[], run: Run) {
  const last = runs.at(-1);
  if (last && last.source === run.source && last.first + last.count === run.first) last.count += run.count;
  else runs.push(run);
}

/**
 * The text a line delta script rebuilds from its base, as runs (the script format is blob-delta.ts's), and the
 * runs of its own lines (those not copied from the base). Throws on a script that does not fit its base.
 */
export function applyLineDelta(script: string, base: RunText): { text: RunText; own: RunText } {
  const ops = new LineSource(script);
  const opCount = ops.lineCount;
  const runs: Run[] = [];
  const own: Run[] = [];
  const baseLines = base.lineCount;
  // Where the walk through the base's runs is: copies mostly move forward.
  let at = 0;
  let atLine = 0;
  for (let k = 0; k < opCount; k++) {
    const op = script.slice(ops.lineStarts()[k]!, ops.lineEnd(k));
    if (op.startsWith("=")) {
      const [start, n] = op.slice(1).split(" ").map(Number) as [number, number];
      if (!(Number.isInteger(start) && Number.isInteger(n) && start >= 0 && n > 0 && start + n <= baseLines)) {
        throw new Error(`config delta copies lines its base lacks: ${op}`);
      }
      if (start < atLine) {
        at = 0;
        atLine = 0;
      }
      while (atLine + base.runs[at]!.count <= start) atLine += base.runs[at++]!.count;
      for (let line = start, left = n; left > 0; ) {
        const r = base.runs[at]!;
        const offset = line - atLine;
        const take = Math.min(left, r.count - offset);
        push(runs, { source: r.source, first: r.first + offset, count: take });
        line += take;
        left -= take;
        if (left > 0) atLine += base.runs[at++]!.count;
      }
    } else if (op.startsWith("+")) {
      const n = Number(op.slice(1));
      if (!(Number.isInteger(n) && n > 0 && k + n < opCount)) throw new Error(`config delta is cut short: ${op}`);
      push(runs, { source: ops, first: k + 1, count: n });
      push(own, { source: ops, first: k + 1, count: n });
      k += n;
    } else {
      throw new Error(`config delta has an unknown instruction: ${op.slice(0, 20)}`);
    }
  }
  return { text: new RunText(runs), own: new RunText(own) };
}
