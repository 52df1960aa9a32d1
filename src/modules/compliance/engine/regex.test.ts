import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { evaluatePolicy, parsePolicy } from "./index.ts";
import { requiredLiteral } from "./matchers.ts";

describe("user regexes run in linear time", () => {
  // Under JavaScript's backtracking engine each of these takes minutes or more on such a line.
  it.each([
    ["(a|aa)+$", `${"a".repeat(40_000)}b`],
    [".*.*.*.*!", "x".repeat(40_000)],
    ["^(\\s*\\w+)*;$", `${"word ".repeat(8_000)}!`],
  ])("%s against a %#-th long line completes promptly", (pattern, line) => {
    const { policy, problems } = parsePolicy(`// Description: hostile\n#[must_not_match_regex]\n${pattern}\n`);
    expect(problems).toEqual([]);
    const config = `hostname r1\n${line}\n${line}\nend\n`;
    const started = performance.now();
    const result = evaluatePolicy(policy, config);
    expect(performance.now() - started).toBeLessThan(2_000); // generous: it takes milliseconds
    expect(result.compliant).toBe(true);
  });
});

describe("literal prefilters never change what a regex matches", () => {
  const config = [
    "ntp server 10.0.0.1 prefer",
    "ntp server  10.0.0.2",
    "ntpserver 10.0.0.3",
    "logging host 10.9.9.9 transport udp port 514",
    "logging trap informational",
    " ip address 10.0.10.1 255.255.255.0",
    "snmp-server community public RO 10",
    "snmp-server community Public RW",
    "aaa authentication login default group tacacs+ local",
    "banner motd ^C{x}^C",
    "a+b literal a.b aab",
    "colour color colr",
    "x{2} xx",
    "logging trap informational, ending",
    "end",
  ].join("\n");
  const lines = config.split("\n");

  // Each is valid in both RE2 and JavaScript with the same meaning, so JavaScript can be the reference.
  it.each([
    "^ntp server \\S+",
    "ntp server +10",
    "ntps?erver",
    "^logging (host|trap) ",
    "logging host \\d+\\.\\d+\\.\\d+\\.\\d+ transport (udp|tcp)",
    "ip address 10\\.0\\.\\d+\\.1 255\\.255\\.255\\.0$",
    "community [Pp]ublic R[OW]",
    "(?i)community public",
    "group tacacs\\+ local$",
    "\\^C\\{x\\}\\^C",
    "a\\+b literal a\\.b",
    "colou?r",
    "colo{0,1}r",
    "x{2} xx",
    "^x{2} xx",
    "public|Public",
    "[a]aa?b",
    "\\bhost\\b",
    // only a literal, perhaps anchored: decided without the regex engine
    "^logging trap informational$",
    "informational$",
    "^end$",
    "^end",
    "community public",
    "^ ip address",
  ])("%s", (pattern) => {
    const { policy, problems } = parsePolicy(`// Description: p\n#[must_not_match_regex]\n${pattern}\n`);
    expect(problems).toEqual([]);
    const reference = new RegExp(pattern.replace("(?i)", ""), pattern.startsWith("(?i)") ? "i" : "");
    for (const text of [config, config.replaceAll("\n", "\r\n"), `${config}\r\n`]) {
      const got = evaluatePolicy(policy, text).rules[0]!.evidence.map((e) => e.line);
      expect(got, JSON.stringify(text.slice(-3))).toEqual(lines.flatMap((l, i) => (reference.test(l) ? [i + 1] : [])));
    }
  });

  it("remembering a regex's answer per line changes no result, past its bound and across evaluations", () => {
    // Repeated lines (answered from memory) interleaved with more distinct ones than a matcher remembers.
    const lines = Array.from(
      { length: 12_000 },
      (_, i) => ` switchport access vlan ${i % 3 === 0 ? 10 : i}${i % 7 === 0 ? "x" : ""}`,
    );
    const config = lines.join("\n");
    const pattern = "^ switchport access vlan [0-9]+0$";
    const { policy } = parsePolicy(`// Description: p\n#[must_not_match_regex]\n${pattern}\n`);
    const expected = lines.flatMap((l, i) => (new RegExp(pattern).test(l) ? [i + 1] : []));
    for (let round = 0; round < 2; round++) {
      const rule = evaluatePolicy(policy, config).rules[0]!;
      expect(rule.evidence.map((e) => e.line)).toEqual(expected.slice(0, rule.evidence.length));
      expect(rule.evidence.length + (rule.omitted ?? 0)).toBe(expected.length);
    }
  });

  it("remembering a line's answer does not keep its configuration text alive", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { policy } = parsePolicy("// Description: p\n#[must_match_regex]\n^hostname [a-z0-9-]+$\n");
    const filler = "interface GigabitEthernet1/0/1\n description user port\n".repeat(20_000); // about 1 MB
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 60; i++) {
      // each device's own hostname: a line the matcher has not seen, so it remembers it
      expect(evaluatePolicy(policy, `hostname device-number-${i}\n${filler}end ${i}\n`).compliant).toBe(true);
    }
    gc();
    // 60 texts of 1 MB each stayed alive when the remembered line pointed into its text
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20e6);
  });

  it("the literal is the longest run every match must contain", () => {
    expect(requiredLiteral("^ntp server \\S+")).toBe("ntp server ");
    expect(requiredLiteral("^ shutdown$")).toBe(" shutdown");
    expect(requiredLiteral("colou?r")).toBe("colo");
    expect(requiredLiteral("snmp-server community \\S+ RW")).toBe("snmp-server community ");
    expect(requiredLiteral("a\\.b\\.c")).toBe("a.b.c");
    expect(requiredLiteral("ab+c")).toBe("ab");
    expect(requiredLiteral("x(y|z)+ abcd")).toBe(" abcd");
    expect(requiredLiteral("public|Public")).toBeNull();
    expect(requiredLiteral("(?i)public")).toBeNull();
    expect(requiredLiteral("\\Qa.b\\E")).toBeNull();
  });
});
