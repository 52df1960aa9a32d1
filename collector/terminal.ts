import { stripAnsi } from "../src/modules/templates/index.ts";

/**
 * Turns what a device's terminal printed into the text a person would have seen: ANSI/VT100 escapes removed,
 * cursor-back (ESC [ n D), backspaces and carriage returns applied the way a terminal applies them (pager
 * prompts that erase themselves with "\r        \r" or "\b\b\b" leave nothing behind), trailing spaces dropped.
 */

// Other control characters but tab, newline, carriage return and backspace.
const CONTROL = /[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;

export { stripAnsi };

/** Applies \r and \b to one line, as an overwriting terminal would. */
export function renderLine(line: string): string {
  if (!line.includes("\r") && !line.includes("\b")) return line;
  const cells: string[] = [];
  let cursor = 0;
  for (const ch of line) {
    if (ch === "\r") cursor = 0;
    else if (ch === "\b") cursor = Math.max(0, cursor - 1);
    else {
      cells[cursor] = ch;
      cursor++;
    }
  }
  return Array.from(cells, (c) => c ?? " ").join("");
}

/**
 * Cursor back n columns (ESC [ n D; no n is 1): what Huawei's pager sends to erase its prompt ("---- More ----",
 * then ESC[16D, blanks, ESC[16D). It moves as n backspaces do, so renderLine applies it; a count past any line's
 * length only takes the cursor to the line's start.
 */
const CURSOR_BACK = /\x1b\[(\d*)D/g;
const MAX_CURSOR_BACK = 4096;

// Anything a terminal would act on but tab and newline: carriage return, backspace, escape, other controls.
const NEEDS_RENDERING = /[\x00-\x08\x0b-\x1f\x7f]/;

/**
 * The full cleanup of a block of terminal output, line by line. Most output needs only its line endings and
 * trailing blanks fixed, which three passes over the whole text do; splitting it into lines and joining them
 * again cost a collector storing 100 KB configurations about a millisecond per download.
 */
export function renderTerminal(text: string): string {
  const lf = text.replace(/\r+\n/g, "\n");
  if (!NEEDS_RENDERING.test(lf)) return lf.replace(/[ \t]+(?=\n|$)/g, "");
  const plain = stripAnsi(
    text.replace(CURSOR_BACK, (_, n: string) => "\b".repeat(Math.min(Number(n || 1), MAX_CURSOR_BACK))),
  ).replace(CONTROL, "");
  return plain
    .split("\n")
    .map((line) => renderLine(line.replace(/\r+$/, "")).replace(/[ \t]+$/, ""))
    .join("\n");
}
