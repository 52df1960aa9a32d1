import { stripAnsi } from "../src/modules/templates/template-text.ts";

/**
 * Turns what a device's terminal printed into the text a person would have seen: ANSI/VT100 escapes removed,
 * backspaces and carriage returns applied the way a terminal applies them (pager prompts that erase themselves
 * with "\r        \r" or "\b\b\b" leave nothing behind), trailing spaces dropped.
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
  const plain = stripAnsi(text).replace(CONTROL, "");
  return plain
    .split("\n")
    .map((line) => renderLine(line.replace(/\r+$/, "")).replace(/[ \t]+$/, ""))
    .join("\n");
}
