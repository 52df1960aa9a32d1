import { describe, expect, it } from "vitest";
import { evaluatePolicy, parsePolicy, type RuleMethod, type RuleResult } from "./index.ts";

// Line numbers matter to the assertions below: keep them in step with this text.
const CONFIG = [
  "hostname edge-1", //                          1
  "service password-encryption", //             2
  "no ip http server", //                        3
  "ip ssh version 2", //                         4
  "ntp server 10.0.0.1", //                      5
  "ntp server 10.0.0.2", //                      6
  "logging host 10.9.9.9", //                    7
  "snmp-server community s3cr3t RO", //          8
  "snmp-server community public RW", //          9
  "line vty 0 4", //                            10
  " exec-timeout 10 0", //                      11
  " transport input ssh telnet", //             12
  " login authentication VTY", //               13
  "banner motd ^C", //                          14
  "Authorized access only", //                  15
  "^C", //                                      16
].join("\n");

function rule(method: RuleMethod, patterns: string[]): RuleResult {
  const { policy, problems } = parsePolicy(`// Description: ${method}\n#[${method}]\n${patterns.join("\n")}\n`);
  expect(problems).toEqual([]);
  return evaluatePolicy(policy, CONFIG).rules[0]!;
}

describe("the twelve rConfig methods", () => {
  it("must_match_single_string: a line containing the string", () => {
    expect(rule("must_match_single_string", ["ip ssh version 2"])).toMatchObject({
      passed: true,
      evidence: [{ line: 4, text: "ip ssh version 2" }],
    });
    const failed = rule("must_match_single_string", ["aaa new-model"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [{ line: null, text: "aaa new-model" }],
      remediation: ["aaa new-model"],
    });
  });

  it("must_match_single_string is case-sensitive and matches inside a line", () => {
    expect(rule("must_match_single_string", ["IP SSH"]).passed).toBe(false);
    expect(rule("must_match_single_string", ["community s3cr3t"])).toMatchObject({
      passed: true,
      evidence: [{ line: 8 }],
    });
  });

  it("must_not_match_single_string: every offending line, and `no` lines to remove them", () => {
    expect(rule("must_not_match_single_string", ["ip domain lookup"])).toMatchObject({
      passed: true,
      evidence: [],
      remediation: null,
    });
    const failed = rule("must_not_match_single_string", ["snmp-server community"]);
    expect(failed.passed).toBe(false);
    expect(failed.evidence).toEqual([
      { line: 8, text: "snmp-server community s3cr3t RO" },
      { line: 9, text: "snmp-server community public RW" },
    ]);
    expect(failed.remediation).toEqual(["no snmp-server community s3cr3t RO", "no snmp-server community public RW"]);
  });

  it("must_not_match_single_string inside a section removes the line under its section header", () => {
    const failed = rule("must_not_match_single_string", ["telnet"]);
    expect(failed.evidence).toEqual([{ line: 12, text: " transport input ssh telnet" }]);
    expect(failed.remediation).toEqual(["line vty 0 4", " no transport input ssh telnet"]);
  });

  it("a forbidden string found in a `no ...` line fails, with no remediation (negating it would re-enable it)", () => {
    const failed = rule("must_not_match_single_string", ["ip http server"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [{ line: 3, text: "no ip http server" }],
      remediation: null,
    });
  });

  it("must_match_regex: every regex matches some line; ^ and $ are the line's; /.../i form", () => {
    const passed = rule("must_match_regex", ["^ntp server \\d+\\.\\d+\\.\\d+\\.\\d+$", "/^LOGGING HOST/i"]);
    expect(passed).toMatchObject({
      passed: true,
      evidence: [
        { line: 5, text: "ntp server 10.0.0.1" },
        { line: 7, text: "logging host 10.9.9.9" },
      ],
    });
    const failed = rule("must_match_regex", ["^ntp server", "^aaa authentication login \\S+ group"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [{ line: null, text: "^aaa authentication login \\S+ group" }],
      remediation: null,
    });
    expect(rule("must_match_regex", ["^transport input"]).passed).toBe(false); // indented: not at the line's start
  });

  it("must_not_match_regex: no line matches any of them; offending lines listed and removed", () => {
    expect(rule("must_not_match_regex", ["^snmp-server community \\S+ RW$"])).toMatchObject({
      passed: false,
      evidence: [{ line: 9, text: "snmp-server community public RW" }],
      remediation: ["no snmp-server community public RW"],
    });
    expect(rule("must_not_match_regex", ["^ip http server", "^snmp-server community \\S+ RW \\d+$"])).toMatchObject({
      passed: true,
      evidence: [],
    });
  });

  it("can_match_any_from_array: one of them is enough", () => {
    expect(rule("can_match_any_from_array", ["logging host 10.1.1.1", "logging host 10.9.9.9"])).toMatchObject({
      passed: true,
      evidence: [{ line: 7, text: "logging host 10.9.9.9" }],
    });
    const failed = rule("can_match_any_from_array", ["logging host 10.1.1.1", "logging host 10.2.2.2"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [
        { line: null, text: "logging host 10.1.1.1" },
        { line: null, text: "logging host 10.2.2.2" },
      ],
      remediation: null,
    });
  });

  it("must_match_all_from_array: all of them; the missing ones are the evidence and the fix", () => {
    expect(rule("must_match_all_from_array", ["ntp server 10.0.0.1", "ntp server 10.0.0.2"])).toMatchObject({
      passed: true,
      evidence: [{ line: 5 }, { line: 6 }],
    });
    const failed = rule("must_match_all_from_array", [
      "ntp server 10.0.0.1",
      "ntp server 10.0.0.3",
      "ntp authenticate",
    ]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [
        { line: null, text: "ntp server 10.0.0.3" },
        { line: null, text: "ntp authenticate" },
      ],
      remediation: ["ntp server 10.0.0.3", "ntp authenticate"],
    });
  });

  it("must_not_match_all_from_array: fails when any of them is present", () => {
    expect(rule("must_not_match_all_from_array", ["ip source-route", "service pad"])).toMatchObject({ passed: true });
    const failed = rule("must_not_match_all_from_array", ["ip source-route", "community public"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [{ line: 9, text: "snmp-server community public RW" }],
      remediation: ["no snmp-server community public RW"],
    });
  });

  it("wildcard_match_single_string: * and ? against the whole line", () => {
    expect(rule("wildcard_match_single_string", ["snmp-server community * R?"])).toMatchObject({
      passed: true,
      evidence: [{ line: 8 }],
    });
    expect(rule("wildcard_match_single_string", ["exec-timeout ? 0"])).toMatchObject({
      passed: false,
      evidence: [{ line: null, text: "exec-timeout ? 0" }],
      remediation: null,
    });
    expect(rule("wildcard_match_single_string", ["exec-timeout * 0"])).toMatchObject({
      passed: true,
      evidence: [{ line: 11, text: " exec-timeout 10 0" }],
    });
    // the whole line: a wildcard without * at the end does not match a longer line
    expect(rule("wildcard_match_single_string", ["snmp-server community *"]).passed).toBe(true);
    expect(rule("wildcard_match_single_string", ["snmp-server * s3cr3t"]).passed).toBe(false);
  });

  it("wildcard_match_any_from_array and wildcard_match_all_from_array", () => {
    expect(rule("wildcard_match_any_from_array", ["ntp server 192.*", "ntp server 10.*"])).toMatchObject({
      passed: true,
      evidence: [{ line: 5 }],
    });
    expect(rule("wildcard_match_any_from_array", ["ntp server 192.*", "ntp peer *"])).toMatchObject({
      passed: false,
      evidence: [{ line: null }, { line: null }],
    });
    expect(rule("wildcard_match_all_from_array", ["ntp server *", "logging host *"])).toMatchObject({
      passed: true,
      evidence: [{ line: 5 }, { line: 7 }],
    });
    expect(rule("wildcard_match_all_from_array", ["ntp server *", "logging trap *"])).toMatchObject({
      passed: false,
      evidence: [{ line: null, text: "logging trap *" }],
    });
  });

  it("match_code_block_from_array: consecutive lines in order, indentation aside", () => {
    const passed = rule("match_code_block_from_array", [
      "line vty 0 4",
      "exec-timeout 10 0",
      "  transport input ssh telnet",
    ]);
    expect(passed).toMatchObject({
      passed: true,
      evidence: [{ line: 10 }, { line: 11, text: " exec-timeout 10 0" }, { line: 12 }],
    });
    // a gap breaks a strict block
    const gap = rule("match_code_block_from_array", ["line vty 0 4", " transport input ssh telnet"]);
    expect(gap).toMatchObject({
      passed: false,
      evidence: [
        { line: null, text: "line vty 0 4" },
        { line: null, text: " transport input ssh telnet" },
      ],
    });
    expect(gap.remediation).toEqual(["line vty 0 4", " transport input ssh telnet"]);
  });

  it("match_code_block_flexible: in order, gaps and whitespace differences allowed", () => {
    expect(
      rule("match_code_block_flexible", ["line vty 0 4", "transport   input ssh telnet", "login authentication VTY"]),
    ).toMatchObject({
      passed: true,
      evidence: [{ line: 10 }, { line: 12 }, { line: 13 }],
    });
    // out of order fails: evidence shows how far it got and what is missing from there
    const failed = rule("match_code_block_flexible", ["line vty 0 4", "login authentication VTY", "exec-timeout 10 0"]);
    expect(failed).toMatchObject({
      passed: false,
      evidence: [{ line: 10 }, { line: 13 }, { line: null, text: "exec-timeout 10 0" }],
    });
  });
});

describe("policy results", () => {
  it("score is the share of rules passed, rounded down, and compliant only when all passed", () => {
    const rules = ["ntp server 10.0.0.1", "ip ssh version 2", "aaa new-model"].map(
      (p, i) => `// Description: r${i}\n#[must_match_single_string]\n${p}`,
    );
    const { policy } = parsePolicy(rules.join("\n\n"));
    expect(evaluatePolicy(policy, CONFIG)).toMatchObject({ compliant: false, score: 66 });
    expect(evaluatePolicy(policy, `${CONFIG}\naaa new-model\n`)).toMatchObject({ compliant: true, score: 100 });
  });

  it("evidence is capped per rule and the rest counted", () => {
    const many = Array.from({ length: 250 }, (_, i) => `logging host 10.0.${i >> 8}.${i & 255}`).join("\n");
    const { policy } = parsePolicy("// Description: no logging hosts\n#[must_not_match_single_string]\nlogging host\n");
    const result = evaluatePolicy(policy, many).rules[0]!;
    expect(result.evidence).toHaveLength(100);
    expect(result.omitted).toBe(150);
    expect(result.evidence[99]).toEqual({ line: 100, text: "logging host 10.0.0.99" });
  });

  it("Windows line endings in the configuration do not reach evidence or $", () => {
    const { policy } = parsePolicy("// Description: x\n#[must_match_regex]\n^ntp server 10\\.0\\.0\\.2$\n");
    expect(evaluatePolicy(policy, CONFIG.replace(/\n/g, "\r\n")).rules[0]).toMatchObject({
      passed: true,
      evidence: [{ line: 6, text: "ntp server 10.0.0.2" }],
    });
  });
});
