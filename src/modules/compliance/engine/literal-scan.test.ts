import { describe, expect, it } from "vitest";
import { ConfigText } from "./config-text.ts";
import { LiteralScanner } from "./literal-scan.ts";

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What scan() must answer: for each literal, the lines (without their "\r\n" or "\n") that contain it. */
const reference = (text: string, literals: string[]) => {
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  if (text.endsWith("\n")) lines.pop();
  return literals.map((lit) => lines.flatMap((l, i) => (l.includes(lit) ? [i] : [])));
};

describe("the one-pass literal scan finds exactly the lines indexOf would", () => {
  it("on configuration-like text with overlapping, nested and repeated literals", () => {
    const literals = ["interface GigabitEthernet", "interface", "face Gig", " shutdown", "shutdown", "no shutdown", "ntp server ", "server", "aaa", "aaaa", "ab", "ba", "x"];
    const text = [
      "interface GigabitEthernet1/0/1", " no shutdown", " shutdown", "aaaaa", "abab", "ntp server 10.0.0.1\r", "ntp server", "",
      "interface Vlan1", "snmp-server community x", "é interface", "shutdown",
    ].join("\n");
    const scanner = new LiteralScanner(literals);
    const config = new ConfigText(text);
    const got = scanner.literals.map((l) => scanner.scan(text, startsOf(config))[scanner.idOf.get(l)!]);
    expect(got).toEqual(reference(text, scanner.literals));
  });

  it("on random texts over a small alphabet, where literals overlap everywhere", () => {
    const next = random(42);
    const alphabet = "ab c\r\n\té";
    const word = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * 6)]).join("").replace(/[\r\n]/g, "a");
    for (let round = 0; round < 200; round++) {
      const literals = Array.from({ length: 1 + Math.floor(next() * 8) }, () => word(1 + Math.floor(next() * 6)));
      const text = Array.from({ length: Math.floor(next() * 400) }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
      const scanner = new LiteralScanner(literals);
      const found = scanner.scan(text, startsOf(new ConfigText(text)));
      expect(found, JSON.stringify({ literals, text })).toEqual(reference(text, scanner.literals));
    }
  });
});

/** ConfigText's line starts and, last, one past the end: what scan() takes. */
const startsOf = (config: ConfigText) => Int32Array.from({ length: config.lineCount + 1 }, (_, i) => config.start(i));
