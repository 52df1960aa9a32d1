/**
 * Checking texts just read from the database, before the line store has their lines (line-store.ts adds them
 * in the background): adding a text's lines to the store costs several times more than finding a term in it
 * once, so a search over texts the store does not hold yet checks them as they are, as runs of lines
 * (line-runs.ts). An older version rebuilt from a delta is checked through the lines it shares with the newer one,
 * which were checked already, and is joined into one string only to be shown.
 */
import { findAnchor, type MarkTerm } from "./line-marks.ts";
import type { LineSource, RunText } from "../storage/line-runs.ts";

/** `matches`: the lines of each source that match, found once per search however many versions share them. */
export type TextTerm = MarkTerm & { matches: WeakMap<LineSource, number[]> };

export const splitLines = (text: string) => (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");

/** Whether some line of a text matches the term, found by its anchors when it has them (the first will do). */
function textHasMatchingLine(text: string, term: TextTerm): boolean {
  if (!term.anchors) return splitLines(text).some((line) => term.test.test(line));
  for (const anchor of term.anchors) {
    for (let at = findAnchor(anchor, text, 0); at >= 0; ) {
      const start = text.lastIndexOf("\n", at - 1) + 1;
      const end = text.indexOf("\n", at);
      if (term.test.test(text.slice(start, end < 0 ? text.length : end))) return true;
      at = end < 0 ? -1 : findAnchor(anchor, text, end + 1); // the rest of this line was just tested
    }
  }
  return false;
}

/** The lines of a source that match a term, in order. */
function sourceMatches(source: LineSource, term: TextTerm): number[] {
  let lines = term.matches.get(source);
  if (lines) return lines;
  const { text } = source;
  const lineText = (line: number) => text.slice(source.lineStarts()[line]!, source.lineEnd(line));
  if (!term.anchors) {
    lines = [];
    for (let line = 0; line < source.lineCount; line++) if (term.test.test(lineText(line))) lines.push(line);
  } else {
    const found = new Set<number>();
    for (const anchor of term.anchors) {
      for (let at = findAnchor(anchor, text, 0); at >= 0; ) {
        const line = source.lineAt(at);
        if (!found.has(line) && term.test.test(lineText(line))) found.add(line);
        const next = source.lineEnd(line) + 1; // the rest of this line was just tested
        at = next < text.length ? findAnchor(anchor, text, next) : -1;
      }
    }
    lines = [...found].sort((x, y) => x - y);
  }
  term.matches.set(source, lines);
  return lines;
}

/**
 * Whether some line of the text matches the term, from its runs' sources. The empty piece after a final "\n"
 * is no line (splitLines), so it is left out of the last run; an empty text is one empty line.
 */
export function hasMatchingLine(text: RunText, term: TextTerm): boolean {
  // A whole text no other text here was checked through: its first matching line is enough.
  if (text.whole && !term.matches.has(text.whole)) return textHasMatchingLine(text.whole.text, term);
  const last = text.runs.length - 1;
  const severalLines = last > 0 || text.runs[0]!.count > 1;
  return text.runs.some((run, i) => {
    let end = run.first + run.count;
    if (i === last && severalLines && run.source.lineStarts()[end - 1] === run.source.lineEnd(end - 1)) end--;
    const lines = sourceMatches(run.source, term);
    let lo = 0;
    let hi = lines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lines[mid]! < run.first) lo = mid + 1;
      else hi = mid;
    }
    return lo < lines.length && lines[lo]! < end;
  });
}

/** The lines of a text and which match which terms (by position), to be shown. */
export function textLines(
  text: RunText,
  terms: readonly MarkTerm[],
): { lines: string[]; matched: { index: number; terms: number[] }[] } {
  const lines = splitLines(text.toString());
  const matched: { index: number; terms: number[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const hit: number[] = [];
    for (let t = 0; t < terms.length; t++) if (terms[t]!.test.test(lines[i]!)) hit.push(t);
    if (hit.length) matched.push({ index: i, terms: hit });
  }
  return { lines, matched };
}
