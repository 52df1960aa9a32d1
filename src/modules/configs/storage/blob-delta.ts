/**
 * A stored text as the edits that rebuild it from another (its base): runs of the base's lines to copy and
 * lines of its own, found with the project's line diff and kept as a small text script. Lines are what `\n`
 * separates, the last (possibly empty) piece included, so any text rebuilds byte for byte.
 *
 * Script: one instruction per line. `=<start> <count>` copies base lines [start, start+count); `+<count>` is
 * followed by that many lines of the text itself.
 */
import { matchLines } from "../history/line-diff.ts";
import { applyLineDelta, RunText } from "./line-runs.ts";

export function encodeLineDelta(text: string, base: string): string {
  const lines = text.split("\n");
  const baseLines = base.split("\n");
  const match = matchLines(lines, baseLines);
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    if (match[i]! >= 0) {
      const start = match[i]!;
      let n = 1;
      while (i + n < lines.length && match[i + n] === start + n) n++;
      out.push(`=${start} ${n}`);
      i += n;
    } else {
      let n = 1;
      while (i + n < lines.length && match[i + n]! < 0) n++;
      // One push per line: spreading a run of 100,000+ lines as arguments overflows the call stack.
      out.push(`+${n}`);
      for (const end = i + n; i < end; i++) out.push(lines[i]!);
    }
  }
  return out.join("\n");
}

/** Rebuilds a text from its script and base (as runs of their lines, line-runs.ts, then joined). */
export function decodeLineDelta(script: string, base: string): string {
  return applyLineDelta(script, RunText.of(base)).text.toString();
}
