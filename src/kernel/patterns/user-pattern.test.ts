import { describe, expect, it } from "vitest";
import {
  compileShippedPattern,
  compileUserAlternatives,
  compileUserPattern,
  MAX_PATTERN_LENGTH,
  PatternError,
  userPatternProblem,
} from "./user-pattern.ts";

const problem = (source: string) => userPatternProblem(source);

describe("user patterns", () => {
  it("match in linear time: patterns that backtrack for minutes in JavaScript answer at once", () => {
    const line = "a".repeat(50_000);
    const started = Date.now();
    expect(compileUserPattern(".*.*.*.*.*.*.*.*!").test(line)).toBe(false);
    expect(compileUserPattern("(a|aa)+$").test(`${line}!`)).toBe(false);
    expect(compileUserPattern("^(a+)+$", { multiline: true }).replaceAll(`${line}!\n`, "x")).toBe(`${line}!\n`);
    expect(Date.now() - started).toBeLessThan(5000); // JavaScript's engine takes minutes on the first alone
  });

  it("keep JavaScript's meaning for what users write: classes, named groups, \\u escapes, flags", () => {
    expect(compileUserPattern("^interface [\\w/.-]+\\d$").test("interface Gi1/0/24")).toBe(true);
    expect(compileUserPattern("[\\d.]+").exec("ip 10.0.0.1")?.[0]).toBe("10.0.0.1");
    expect(compileUserPattern("(?<word>sec)ret").exec("a secret")?.groups?.word).toBe("sec");
    expect(compileUserPattern("\\u00e9t\\u00e9").test("été")).toBe(true);
    expect(compileUserPattern("a/b").test("a/b")).toBe(true);
    expect(compileUserPattern("HOSTNAME", { ignoreCase: true }).test("hostname sw1")).toBe(true);
    expect(compileUserPattern("HOSTNAME").test("hostname sw1")).toBe(false);
    expect(compileUserPattern("^x$").test("a\nx\nb")).toBe(false);
    expect(compileUserPattern("^x$", { multiline: true }).test("a\nx\nb")).toBe(true);
  });

  it("replace every match as String.prototype.replace does, groups included", () => {
    const secret = compileUserPattern("^(snmp-server community) (\\S+)(?: (RO|RW))?", { multiline: true });
    expect(secret.groupCount).toBe(3);
    expect(
      secret.replaceAll("snmp-server community public RO\nsnmp-server community private\nend", "$1 <hidden>[$3]$$"),
    ).toBe("snmp-server community <hidden>[RO]$\nsnmp-server community <hidden>[]$\nend");
    expect(secret.replaceAll("nothing here", "$1")).toBe("nothing here");
  });

  it("refuse lookaround and backreferences, saying RE2 lacks them", () => {
    expect(problem("key (?!<)\\S+")).toMatch(
      /^uses lookahead \(\(\?!\.\.\.\)\), which RE2, the engine that runs patterns, lacks: it matches in linear time/,
    );
    expect(problem("a(?=b)")).toMatch(/^uses lookahead .*RE2/);
    expect(problem("(?<=\\s)key")).toMatch(/^uses lookbehind \(\(\?<=\.\.\.\)\), which RE2/);
    expect(problem("(?<!public-)key")).toMatch(/^uses lookbehind .*RE2/);
    expect(problem("(a)\\1")).toMatch(/^uses a backreference \(\\1\), which RE2/);
    expect(problem("(?<q>a)\\k<q>")).toMatch(/^uses a backreference \(\\k<name>\), which RE2/);
    // Inside a class these are plain characters.
    expect(problem("[(?=]x")).toBeUndefined();
  });

  it("refuse what does not compile, with RE2's reason", () => {
    expect(problem("(unclosed")).toBe("is not a valid regular expression: missing closing ): `(unclosed`");
    expect(problem("a{2000}")).toMatch(/^is not a valid regular expression: invalid repeat count/);
    expect(() => compileUserPattern("[z-a]")).toThrow(PatternError);
  });

  it("refuse sources over the size limit, naming it", () => {
    expect(problem("a".repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
    expect(problem("a".repeat(MAX_PATTERN_LENGTH + 1))).toBe(
      `must be at most 1000 characters (this one has ${MAX_PATTERN_LENGTH + 1})`,
    );
  });

  it("refuse NUL and other control characters, tab aside", () => {
    expect(problem("a\u0000b")).toBe(
      "must not contain control characters (found U+0000 at position 2); write \\n, \\t or \\x00 to match one",
    );
    expect(problem("a\nb")).toMatch(/U\+000A at position 2/);
    expect(problem("\u001b[0m")).toMatch(/U\+001B/);
    expect(problem("a\u0085")).toMatch(/U\+0085/);
    expect(problem("a\tb")).toBeUndefined();
    expect(problem("a\\x00b")).toBeUndefined(); // an escape is how a NUL is matched
    expect(() => compileShippedPattern("a\u0000")).toThrow(/control characters/);
  });

  it("combine into one alternation that keeps each pattern's case option", () => {
    const any = compileUserAlternatives([{ source: "^ntp clock-period" }, { source: "UPTIME", ignoreCase: true }]);
    expect(
      ["ntp clock-period 123", "sw1 uptime is 3 weeks", "NTP CLOCK-PERIOD 1", "hostname"].map((l) => any.test(l)),
    ).toEqual([true, true, false, false]);
    expect(() => compileUserAlternatives([{ source: "ok" }, { source: "a(?=b)" }])).toThrow(/^uses lookahead/);
  });

  it("shipped patterns run in JavaScript's engine, lookahead included", () => {
    const shipped = compileShippedPattern("\\b(key(?: [0-7])?) (?!<)\\S+$", { multiline: true });
    expect(shipped.groupCount).toBe(1);
    expect(shipped.replaceAll(" key 7 abc\n key <hidden>", "$1 <secret>")).toBe(" key 7 <secret>\n key <hidden>");
  });
});
