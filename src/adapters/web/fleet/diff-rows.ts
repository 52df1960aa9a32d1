/**
 * The API's diff hunks laid out for reading: rows for a side-by-side table (a removed line beside the added
 * line that replaced it), folds for the unchanged stretches between hunks, and, inside a changed pair, which
 * words changed. Pure; the words are matched by the same line matcher the diff itself uses.
 */
import type { DiffHunk, DiffLine } from "../../../modules/configs/index.ts";
import { matchLines } from "../../../modules/configs/index.ts";

/** A piece of a line; `changed` marks words the other side of the pair lacks. */
export type Segment = { text: string; changed: boolean };
export type Cell = { line: number; segments: Segment[] };
export type Row =
  | { kind: "context"; old: Cell; new: Cell }
  | { kind: "change"; old: Cell | null; new: Cell | null }
  | { kind: "fold"; oldFrom: number; oldTo: number; newFrom: number; newTo: number };

/** Words, runs of spaces and single punctuation marks, so `permit 10.0.0.1` changes only the address's parts. */
const tokens = (text: string) => text.match(/[A-Za-z0-9_]+|\s+|[^A-Za-z0-9_\s]/g) ?? [];

function merge(parts: Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (last && last.changed === p.changed) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

/** Which tokens of each line the other lacks. */
export function wordDiff(oldText: string, newText: string): { old: Segment[]; new: Segment[] } {
  const a = tokens(oldText),
    b = tokens(newText);
  const match = matchLines(a, b);
  const kept = new Set<number>();
  match.forEach((j) => j >= 0 && kept.add(j));
  return {
    old: merge(a.map((text, i) => ({ text, changed: match[i] === -1 }))),
    new: merge(b.map((text, j) => ({ text, changed: !kept.has(j) }))),
  };
}

const whole = (text: string, changed: boolean): Segment[] => [{ text, changed }];

/** A run of removed lines and the run of added lines after it: paired in order, the rest alone. */
function changeRows(removed: DiffLine[], added: DiffLine[]): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < Math.max(removed.length, added.length); i++) {
    const r = removed[i],
      a = added[i];
    if (r && a) {
      const words = wordDiff(r.text, a.text);
      rows.push({
        kind: "change",
        old: { line: r.old_line!, segments: words.old },
        new: { line: a.new_line!, segments: words.new },
      });
    } else if (r) rows.push({ kind: "change", old: { line: r.old_line!, segments: whole(r.text, true) }, new: null });
    else rows.push({ kind: "change", old: null, new: { line: a!.new_line!, segments: whole(a!.text, true) } });
  }
  return rows;
}

/**
 * Rows for every hunk, with a fold before, between and after them for the unchanged lines not shown.
 * `oldLines`/`newLines` are the texts' line counts (a fold after the last hunk runs to the end).
 */
export function diffRows(hunks: readonly DiffHunk[], oldLines: number, newLines: number): Row[] {
  const rows: Row[] = [];
  let oldNext = 1,
    newNext = 1;
  const fold = (oldTo: number, newTo: number) => {
    if (oldTo >= oldNext || newTo >= newNext)
      rows.push({ kind: "fold", oldFrom: oldNext, oldTo, newFrom: newNext, newTo });
  };
  for (const hunk of hunks) {
    // Numbers come from the lines (excluded lines leave gaps); a side with no line in the hunk has it after its
    // start line, as diff -u writes it ("-0,0" before the first line).
    const oldShown = hunk.lines.flatMap((l) => (l.old_line === null ? [] : [l.old_line]));
    const newShown = hunk.lines.flatMap((l) => (l.new_line === null ? [] : [l.new_line]));
    fold((oldShown[0] ?? hunk.old_start + 1) - 1, (newShown[0] ?? hunk.new_start + 1) - 1);
    let removed: DiffLine[] = [],
      added: DiffLine[] = [];
    const flush = () => {
      for (const row of changeRows(removed, added)) rows.push(row);
      removed = [];
      added = [];
    };
    for (const line of hunk.lines) {
      if (line.kind === "removed") {
        if (added.length) flush();
        removed.push(line);
      } else if (line.kind === "added") added.push(line);
      else {
        flush();
        rows.push({
          kind: "context",
          old: { line: line.old_line!, segments: whole(line.old_text ?? line.text, false) },
          new: { line: line.new_line!, segments: whole(line.text, false) },
        });
      }
    }
    flush();
    oldNext = (oldShown.at(-1) ?? hunk.old_start) + 1;
    newNext = (newShown.at(-1) ?? hunk.new_start) + 1;
  }
  if (hunks.length) fold(oldLines, newLines);
  return rows;
}
