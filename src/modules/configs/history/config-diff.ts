/**
 * Differences between two configuration texts, as hunks a UI can lay side by side and as a unified diff. Pure:
 * the options decide which lines count as equal (whitespace, case) and which are left out (exclusion rules);
 * line numbers always refer to the texts as stored.
 */
import { matchLines } from "./line-diff.ts";

export type DiffOptions = {
  /** Unchanged lines shown around each change (default 3). */
  context?: number;
  /** Runs of spaces and tabs count as one space, and leading and trailing whitespace is ignored. */
  ignoreWhitespace?: boolean;
  ignoreCase?: boolean;
  /** Lines for which this is true are left out of both sides before comparing. */
  exclude?: (line: string) => boolean;
};

export type DiffLine = {
  kind: "context" | "removed" | "added";
  /** 1-based line numbers in the old and new text; null on the side the line is not in. */
  old_line: number | null;
  new_line: number | null;
  text: string;
  /** For a context line equal only under ignore_whitespace / ignore_case: how the old text had it. */
  old_text?: string;
};

export type DiffHunk = {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: DiffLine[];
};

export type TextDiff = {
  hunks: DiffHunk[];
  added: number;
  removed: number;
  /** The number of the last line of a text that lacks a final newline (the unified form marks it), else null. */
  oldUnterminated: number | null;
  newUnterminated: number | null;
};

type Side = { texts: string[]; numbers: number[]; noNewline: boolean; lastNumber: number };

function sideOf(text: string, exclude: DiffOptions["exclude"]): Side {
  const lines = text === "" ? [] : text.split("\n");
  const noNewline = lines.length > 0 && lines[lines.length - 1] !== "";
  if (!noNewline && lines.length) lines.pop();
  if (!exclude) return { texts: lines, numbers: lines.map((_, i) => i + 1), noNewline, lastNumber: lines.length };
  const texts: string[] = [];
  const numbers: number[] = [];
  lines.forEach((l, i) => {
    if (!exclude(l)) {
      texts.push(l);
      numbers.push(i + 1);
    }
  });
  return { texts, numbers, noNewline, lastNumber: lines.length };
}

function keysOf(side: Side, options: DiffOptions): string[] {
  const keys = side.texts.map((l) => {
    let key = options.ignoreWhitespace ? l.replace(/[ \t]+/g, " ").trim() : l;
    if (options.ignoreCase) key = key.toLowerCase();
    return key;
  });
  // A last line without its newline equals only another such line, as for diff(1).
  if (side.noNewline && side.numbers[side.numbers.length - 1] === side.lastNumber) keys[keys.length - 1] += "\u0000";
  return keys;
}

/** Changed stretches, half-open: old [a0, a1) became new [b0, b1); lines between stretches are equal. */
type Block = { a0: number; a1: number; b0: number; b1: number };

function blocksOf(match: Int32Array, m: number): Block[] {
  const n = match.length;
  const blocks: Block[] = [];
  let i = 0,
    j = 0;
  for (;;) {
    while (i < n && match[i] === j) {
      i++;
      j++;
    }
    if (i >= n && j >= m) return blocks;
    const a0 = i,
      b0 = j;
    while (i < n && match[i] === -1) i++;
    j = i < n ? match[i]! : m;
    blocks.push({ a0, a1: i, b0, b1: j });
  }
}

export function diffTexts(oldText: string, newText: string, options: DiffOptions = {}): TextDiff {
  const context = options.context ?? 3;
  const a = sideOf(oldText, options.exclude);
  const b = sideOf(newText, options.exclude);
  const match = matchLines(keysOf(a, options), keysOf(b, options));
  const blocks = blocksOf(match, b.texts.length);
  const n = a.texts.length,
    m = b.texts.length;

  let added = 0,
    removed = 0;
  const hunks: DiffHunk[] = [];
  for (let s = 0; s < blocks.length; ) {
    // Merge blocks whose unchanged gap fits within the context of both.
    let e = s;
    while (e + 1 < blocks.length && blocks[e + 1]!.a0 - blocks[e]!.a1 <= 2 * context) e++;
    const first = blocks[s]!,
      last = blocks[e]!;
    const lead = Math.min(context, first.a0);
    const trail = Math.min(context, n - last.a1, m - last.b1);
    const lines: DiffLine[] = [];
    const pushContext = (i: number, j: number) => {
      const line: DiffLine = { kind: "context", old_line: a.numbers[i]!, new_line: b.numbers[j]!, text: b.texts[j]! };
      if (a.texts[i] !== b.texts[j]) line.old_text = a.texts[i]!;
      lines.push(line);
    };
    let i = first.a0 - lead,
      j = first.b0 - lead;
    for (let k = s; k <= e; k++) {
      const blk = blocks[k]!;
      while (i < blk.a0) pushContext(i++, j++);
      for (; i < blk.a1; i++)
        lines.push({ kind: "removed", old_line: a.numbers[i]!, new_line: null, text: a.texts[i]! });
      for (; j < blk.b1; j++) lines.push({ kind: "added", old_line: null, new_line: b.numbers[j]!, text: b.texts[j]! });
      removed += blk.a1 - blk.a0;
      added += blk.b1 - blk.b0;
    }
    for (let t = 0; t < trail; t++) pushContext(i++, j++);
    const startOf = (side: Side, from: number, to: number) =>
      // An empty range starts at the line before it, as in diff(1) ("-0,0" before the first line).
      to > from ? side.numbers[from]! : from > 0 ? side.numbers[from - 1]! : 0;
    const a0 = first.a0 - lead,
      b0 = first.b0 - lead;
    hunks.push({
      old_start: startOf(a, a0, i),
      old_lines: i - a0,
      new_start: startOf(b, b0, j),
      new_lines: j - b0,
      lines,
    });
    s = e + 1;
  }
  return {
    hunks,
    added,
    removed,
    oldUnterminated: a.noNewline ? a.lastNumber : null,
    newUnterminated: b.noNewline ? b.lastNumber : null,
  };
}

const NO_NEWLINE = "\\ No newline at end of file";

/** The unified diff (`diff -u`) form; empty when the texts are equal. */
export function formatUnified(diff: TextDiff, oldLabel: string, newLabel: string): string {
  if (!diff.hunks.length) return "";
  const out = [`--- ${oldLabel}`, `+++ ${newLabel}`];
  for (const h of diff.hunks) {
    out.push(`@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@`);
    for (const l of h.lines) {
      out.push((l.kind === "context" ? " " : l.kind === "removed" ? "-" : "+") + l.text);
      if (
        (l.old_line !== null && l.old_line === diff.oldUnterminated) ||
        (l.new_line !== null && l.new_line === diff.newUnterminated)
      )
        out.push(NO_NEWLINE);
    }
  }
  return out.join("\n") + "\n";
}

/** Both forms at once, for callers that hold the two texts: the unified text and the line counts. */
export function unifiedDiff(
  oldText: string,
  newText: string,
  oldLabel: string,
  newLabel: string,
  options: DiffOptions = {},
) {
  const diff = diffTexts(oldText, newText, options);
  return { text: formatUnified(diff, oldLabel, newLabel), added: diff.added, removed: diff.removed, diff };
}
