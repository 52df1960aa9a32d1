import { describe, expect, it } from "vitest";
import { mulberry32 } from "../src/kernel/random.ts";
import { normalizeConfigText } from "../src/modules/configs/storage/text.ts";
import { cleanCommandOutput } from "./session.ts";
import { renderLine, renderTerminal, stripAnsi } from "./terminal.ts";

// The line-by-line definitions the whole-text versions replaced: the slow, obvious way.
const CONTROL = /[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;
const renderByLine = (text: string) =>
  stripAnsi(text)
    .replace(CONTROL, "")
    .split("\n")
    .map((line) => renderLine(line.replace(/\r+$/, "")).replace(/[ \t]+$/, ""))
    .join("\n");
function cleanByLine(raw: string, command: string) {
  const lines = renderByLine(raw).split("\n");
  if (lines.length && lines[0]!.trim().endsWith(command.trim())) lines.shift();
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines.length ? lines.join("\n") + "\n" : "";
}
function normalizeByLine(text: string) {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/\s+$/, ""));
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  while (lines.length && lines[0] === "") lines.shift();
  return lines.length ? lines.join("\n") + "\n" : "";
}

const rnd = mulberry32(7);
const PIECES = [
  "interface Gi0/1",
  " description up",
  "show run",
  "!",
  "",
  " ",
  "\t",
  "  ",
  "\r",
  "\r\n",
  "\n",
  "\n\n",
  "\b",
  "\x1b[0m",
  "\x1b]0;t\x07",
  "\x01",
  "\u00a0",
  "\u2028",
  "\v",
  "\f",
  "ü",
  "#",
  "--More--",
];
// Half the samples without what needs a terminal's rendering: the path most output takes.
const PLAIN = PIECES.filter((p) => !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r$/.test(p));
const sample = (pieces: string[]) =>
  Array.from({ length: Math.floor(rnd() * 30) }, () => pieces[Math.floor(rnd() * pieces.length)]!).join("");

describe("whole-text cleanup", () => {
  it("renders, strips the echo and normalises exactly as line by line does", () => {
    for (let i = 0; i < 5000; i++) {
      const text = sample(i % 2 ? PIECES : PLAIN);
      expect(renderTerminal(text), JSON.stringify(text)).toBe(renderByLine(text));
      expect(cleanCommandOutput(text, "show run"), JSON.stringify(text)).toBe(cleanByLine(text, "show run"));
      expect(normalizeConfigText(text), JSON.stringify(text)).toBe(normalizeByLine(text));
    }
  });
});
