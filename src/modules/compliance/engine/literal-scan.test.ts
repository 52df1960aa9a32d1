import { describe, expect, it } from "vitest";
import { ConfigText } from "./config-text.ts";
import { LiteralScanner, type TextIndex } from "./literal-scan.ts";
import { mulberry32 } from "../../../kernel/random.ts";

/** What index() must answer: for each literal, the lines (without their "\r\n" or "\n") that contain it. */
const reference = (text: string, literals: string[]) => {
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  if (text.endsWith("\n")) lines.pop();
  return literals.map((lit) => lines.flatMap((l, i) => (l.includes(lit) ? [i] : [])));
};

describe("the one-pass literal scan finds exactly the lines indexOf would", () => {
  it("on configuration-like text with overlapping, nested and repeated literals", () => {
    const literals = [
      "interface GigabitEthernet",
      "interface",
      "face Gig",
      " shutdown",
      "shutdown",
      "no shutdown",
      "ntp server ",
      "server",
      "aaa",
      "aaaa",
      "ab",
      "ba",
      "x",
    ];
    const text = [
      "interface GigabitEthernet1/0/1",
      " no shutdown",
      " shutdown",
      "aaaaa",
      "abab",
      "ntp server 10.0.0.1\r",
      "ntp server",
      "",
      "interface Vlan1",
      "snmp-server community x",
      "é interface",
      "shutdown",
    ].join("\n");
    const scanner = new LiteralScanner(literals);
    const got = scanner.literals.map((l) => Array.from(scanner.index(text).linesOf(scanner.idOf.get(l)!)));
    expect(got).toEqual(reference(text, scanner.literals));
  });

  it("on random texts over a small alphabet, where literals overlap everywhere", () => {
    const next = mulberry32(42);
    const alphabet = "ab c\r\n\té";
    const word = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * 6)])
        .join("")
        .replace(/[\r\n]/g, "a");
    for (let round = 0; round < 200; round++) {
      const literals = Array.from({ length: 1 + Math.floor(next() * 8) }, () => word(1 + Math.floor(next() * 6)));
      const text = Array.from(
        { length: Math.floor(next() * 400) },
        () => alphabet[Math.floor(next() * alphabet.length)],
      ).join("");
      const scanner = new LiteralScanner(literals);
      const index = scanner.index(text);
      expect(linesOfLiterals(scanner, index), JSON.stringify({ literals, text })).toEqual(
        reference(text, scanner.literals),
      );
      expect(linesOf(index), JSON.stringify(text)).toEqual(linesOf(new ConfigText(text)));
    }
  });

  it("on a configuration many scan windows long, with non-ASCII text and a line longer than a window", () => {
    const next = mulberry32(7);
    const words = [
      "interface",
      "Gi1/0/",
      " shutdown",
      "description Zürich–Genève",
      "ntp server",
      "snmp-server community",
      "\r",
      "é",
    ];
    const lines = Array.from({ length: 60_000 }, () =>
      Array.from({ length: 1 + Math.floor(next() * 5) }, () => words[Math.floor(next() * words.length)]).join(" "),
    );
    lines[30_000] = "x".repeat(700_000) + " shutdown";
    for (const text of [lines.join("\n"), lines.join("\n").replace(/[^\x00-\x7f]/g, "u") + "\n"]) {
      const literals = ["shutdown", "ntp server", "community", "interface Gi", "Gi1/0/ interface"];
      const scanner = new LiteralScanner(literals);
      const index = scanner.index(text);
      expect(linesOfLiterals(scanner, index)).toEqual(reference(text, scanner.literals));
      expect(linesOf(index)).toEqual(linesOf(new ConfigText(text)));
    }
  });
});

describe("line breaks are found 16 bytes at a time", () => {
  it("at every position of a 16-byte block, and none from what an earlier, longer text left past the end", () => {
    const scanner = new LiteralScanner(["ab"]);
    for (let length = 0; length <= 70; length++) {
      for (let at = 0; at < length; at++) {
        scanner.index("\n".repeat(200)); // leaves line breaks in the memory past the shorter text below
        const text = "ab"
          .repeat(length)
          .slice(0, length)
          .split("")
          .map((c, i) => (i === at || i === length - 1 - (at % 5) ? "\n" : c))
          .join("");
        const index = scanner.index(text);
        expect(linesOf(index), JSON.stringify(text)).toEqual(linesOf(new ConfigText(text)));
        expect(linesOfLiterals(scanner, index)).toEqual(reference(text, scanner.literals));
      }
    }
  });
});

/** Line count and every line's start, as ConfigText counts them (with no scanner: its own indexOf pass). */
const linesOf = (lines: { lineCount: number } & ({ starts: Int32Array } | { start(i: number): number })) =>
  Array.from({ length: lines.lineCount + 1 }, (_, i) => ("starts" in lines ? lines.starts[i] : lines.start(i)));

/** Each of the scanner's literals' lines, in the order of its `literals`. */
const linesOfLiterals = (scanner: LiteralScanner, index: TextIndex) =>
  scanner.literals.map((_, id) => Array.from(index.linesOf(id)));
