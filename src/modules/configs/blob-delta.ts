/**
 * A stored text as the edits that rebuild it from another (its base): runs of the base's lines to copy and
 * lines of its own, found with the project's line diff and kept as a small text script. Lines are what `\n`
 * separates, the last (possibly empty) piece included, so any text rebuilds byte for byte.
 *
 * Script: one instruction per line. `=<start> <count>` copies base lines [start, start+count); `+<count>` is
 * followed by that many lines of the text itself.
 */
import { matchLines } from "./line-diff.ts";

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
      out.push(`+${n}`, ...lines.slice(i, i + n));
      i += n;
    }
  }
  return out.join("\n");
}

/** Where each line of a text starts (line i runs to the "\n" before line i + 1, or to the end). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  return starts;
}

/**
 * Rebuilds a text from its script and base. Runs of lines are copied as whole slices of the base and of the
 * script rather than line by line: a search rebuilds hundreds of texts per query.
 */
export function decodeLineDelta(script: string, base: string): string {
  const starts = lineStarts(base);
  const pieces: string[] = [];
  for (let pos = 0; pos <= script.length; ) {
    const end = script.indexOf("\n", pos);
    const op = script.slice(pos, end < 0 ? script.length : end);
    pos = end < 0 ? script.length + 1 : end + 1;
    if (op.startsWith("=")) {
      const [start, n] = op.slice(1).split(" ").map(Number) as [number, number];
      if (!(Number.isInteger(start) && Number.isInteger(n) && start >= 0 && n > 0 && start + n <= starts.length)) {
        throw new Error(`config delta copies lines its base lacks: ${op}`);
      }
      pieces.push(base.slice(starts[start]!, start + n < starts.length ? starts[start + n]! - 1 : base.length));
    } else if (op.startsWith("+")) {
      const n = Number(op.slice(1));
      if (!(Number.isInteger(n) && n > 0) || pos > script.length) throw new Error(`config delta is cut short: ${op}`);
      // The n lines that follow, as one slice of the script.
      let last = pos;
      for (let k = 1; k < n; k++) {
        const next = script.indexOf("\n", last);
        if (next < 0) throw new Error(`config delta is cut short: ${op}`);
        last = next + 1;
      }
      const stop = script.indexOf("\n", last);
      pieces.push(script.slice(pos, stop < 0 ? script.length : stop));
      pos = stop < 0 ? script.length + 1 : stop + 1;
    } else {
      throw new Error(`config delta has an unknown instruction: ${op.slice(0, 20)}`);
    }
  }
  return pieces.join("\n");
}
