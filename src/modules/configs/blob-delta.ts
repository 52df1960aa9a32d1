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

export function decodeLineDelta(script: string, base: string): string {
  const baseLines = base.split("\n");
  const ops = script.split("\n");
  const lines: string[] = [];
  for (let k = 0; k < ops.length; k++) {
    const op = ops[k]!;
    if (op.startsWith("=")) {
      const [start, n] = op.slice(1).split(" ").map(Number) as [number, number];
      if (!(start >= 0 && n > 0 && start + n <= baseLines.length)) throw new Error(`config delta copies lines its base lacks: ${op}`);
      for (let j = start; j < start + n; j++) lines.push(baseLines[j]!);
    } else if (op.startsWith("+")) {
      const n = Number(op.slice(1));
      if (!(n > 0 && k + n < ops.length)) throw new Error(`config delta is cut short: ${op}`);
      for (let j = 0; j < n; j++) lines.push(ops[++k]!);
    } else {
      throw new Error(`config delta has an unknown instruction: ${op.slice(0, 20)}`);
    }
  }
  return lines.join("\n");
}
