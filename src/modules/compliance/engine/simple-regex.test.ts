import { describe, expect, it } from "vitest";
import { compileUserPattern } from "../../../kernel/patterns/user-pattern.ts";
import { wildcardMatcher } from "./matchers.ts";
import { simpleRegexTest } from "./simple-regex.ts";

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The test on `line` placed between other lines of a text, as ConfigText asks it. */
const inText = (test: (text: string, from: number, to: number) => boolean, line: string) => {
  const text = `ab 1.\n${line}\r\nx-y ab`;
  return test(text, 6, 6 + line.length);
};

describe("simple regexes tested in place answer as RE2 does", () => {
  it("takes the patterns policies are written with, and leaves the rest to RE2", () => {
    const never = () => {
      throw new Error("no fallback expected");
    };
    for (const p of [
      "^hostname [a-z0-9-]+$",
      "^ switchport access vlan [0-9]+$",
      "^snmp-server community [^ ]+ RO [0-9]+$",
      "^ntp server \\d+\\.\\d+",
      "permit ip any any$",
      "^logging host [0-9.]+$",
      "a\\$",
      "^enable secret (5|8|9) ",
      "^username [^ ]+ (privilege [0-9]+ )?password ",
      "^ exec-timeout ([1-9]|1[0-5]) 0$",
      "a|b",
      "(?:ab)+c",
    ]) {
      expect(simpleRegexTest(p, never), p).not.toBeNull();
    }
    for (const p of [
      "a{2}",
      "(?i)x",
      "^a|b",
      "a|b$",
      "x+?",
      "\\Qa\\E",
      "[[:alpha:]]",
      "[\\d]",
      "\\bx",
      "é",
      "^$",
      "a**",
      "(?P<n>x)",
      "(?=x)",
      "(a",
      "a)",
      "x".repeat(33),
    ]) {
      expect(simpleRegexTest(p, never), p).toBeNull();
    }
  });

  it("with as many pattern characters as it takes, the last one in the integer's sign bit", () => {
    for (const pattern of [`^${"x".repeat(30)}(a|b)`, `${"x".repeat(29)}(ab|b)+$`, `(x|y)*${"x".repeat(29)}a$`]) {
      const test = simpleRegexTest(pattern, () => {
        throw new Error("no fallback expected");
      })!;
      const re2 = compileUserPattern(pattern);
      for (const line of [
        "x".repeat(30) + "a",
        "x".repeat(30) + "c",
        "x".repeat(29) + "a",
        "x".repeat(31) + "ab",
        "yx" + "x".repeat(29) + "bab",
        "x".repeat(29) + "abab",
      ]) {
        expect(inText(test, line), JSON.stringify({ pattern, line })).toBe(re2.test(line));
      }
    }
  });

  it("on random patterns and lines over a small alphabet, ASCII or not", () => {
    const next = random(18);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
    const atoms = [
      "a",
      "b",
      " ",
      "-",
      ".",
      "\\.",
      "\\d",
      "\\w",
      "\\s",
      "[ab]",
      "[^ ]",
      "[a-c0-9]",
      "[-a]",
      "[^a-b ]",
      "1",
      "\\-",
      "(a|b)",
      "(a|)",
      "(?:ab|c)",
      "(a[0-9])",
      "((a|b)c|d)",
      "(|b )",
      "(a*b|b+)",
    ];
    const chars = ["a", "b", "c", " ", "-", ".", "1", "9", "\t", "_", "\r", "\v", "\f", "é", "😀"];
    let taken = 0;
    for (let round = 0; round < 3000; round++) {
      const piece = () =>
        Array.from({ length: 1 + Math.floor(next() * 5) }, () => pick(atoms) + pick(["", "", "", "*", "+", "?"])).join(
          "",
        );
      const pattern =
        next() < 0.15 ? `${piece()}|${piece()}` : (next() < 0.5 ? "^" : "") + piece() + (next() < 0.5 ? "$" : "");
      const re2 = compileUserPattern(pattern);
      let fallbacks = 0;
      const test = simpleRegexTest(pattern, (line) => (fallbacks++, re2.test(line)));
      if (!test) continue;
      taken++;
      for (let l = 0; l < 8; l++) {
        const ascii = next() < 0.8;
        const line = Array.from({ length: Math.floor(next() * 10) }, () =>
          pick(ascii ? chars.slice(0, 13) : chars),
        ).join("");
        expect(inText(test, line), JSON.stringify({ pattern, line })).toBe(re2.test(line));
      }
      expect(fallbacks).toBeLessThanOrEqual(8);
    }
    expect(taken).toBeGreaterThan(2500); // the generator's patterns are the kind this takes
  });

  it("wildcards (whole lines, leading and trailing whitespace aside) on random globs and lines", () => {
    const next = random(21);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
    for (let round = 0; round < 2000; round++) {
      const glob = Array.from({ length: 1 + Math.floor(next() * 6) }, () =>
        pick(["a", "b", " ", "*", "?", ".", "-", "+"]),
      ).join("");
      const m = wildcardMatcher(glob);
      if ("error" in m) continue;
      expect(m.testAt, glob).toBeDefined();
      for (let l = 0; l < 6; l++) {
        const line = Array.from({ length: Math.floor(next() * 9) }, () =>
          pick(["a", "b", " ", "\t", ".", "-", "+", "é"]),
        ).join("");
        // m.test: the same pattern in RE2
        expect(inText(m.testAt!, line), JSON.stringify({ glob, line })).toBe(m.test!(line));
      }
    }
  });
});
