import { describe, expect, it } from "vitest";
import { evaluatePolicy, parsePolicy } from "./index.ts";

// As rConfig users write them: comments, descriptions, several blocks.
const RCONFIG = `// Description: must_match_single_string SNMP Policy
#[must_match_single_string]
snmp-server host 1.1.1.1 TESTCOMMUNITY

// Description: NTP servers
#[must_match_all_from_array]
ntp server 10.0.0.1
ntp server 10.0.0.2

// Description: no SNMP RW communities
#[must_not_match_regex]
/snmp-server community \\S+ RW/
`;

describe("parsePolicy: the rConfig format", () => {
  it("reads blocks: description, method, patterns and the line each starts at", () => {
    const { policy, problems } = parsePolicy(RCONFIG);
    expect(problems).toEqual([]);
    expect(policy.rules).toEqual([
      {
        index: 0,
        line: 1,
        description: "must_match_single_string SNMP Policy",
        method: "must_match_single_string",
        patterns: ["snmp-server host 1.1.1.1 TESTCOMMUNITY"],
      },
      {
        index: 1,
        line: 5,
        description: "NTP servers",
        method: "must_match_all_from_array",
        patterns: ["ntp server 10.0.0.1", "ntp server 10.0.0.2"],
      },
      {
        index: 2,
        line: 10,
        description: "no SNMP RW communities",
        method: "must_not_match_regex",
        patterns: ["/snmp-server community \\S+ RW/"],
      },
    ]);
  });

  it("Windows line endings, trailing spaces, extra blank lines and comments change nothing", () => {
    const messy = `// policy for core switches, owner: netops\r\n\r\n\r\n${RCONFIG.split("\n")
      .map((l) => (l === "" ? "\t \r\n\r\n// another comment" : `${l}   `))
      .join("\r\n")}\r\n\r\n`;
    const clean = parsePolicy(RCONFIG).policy.rules.map(({ line, ...r }) => r);
    const { policy, problems } = parsePolicy(messy);
    expect(problems).toEqual([]);
    expect(policy.rules.map(({ line, ...r }) => r)).toEqual(clean);
    const config =
      "snmp-server host 1.1.1.1 TESTCOMMUNITY\nntp server 10.0.0.1\nntp server 10.0.0.2\nsnmp-server community x RO\n";
    expect(evaluatePolicy(policy, config)).toMatchObject({ compliant: true, score: 100 });
  });

  it("a pattern on the method line itself, and a description-less block described by its method", () => {
    const { policy, problems } = parsePolicy("#[must_match_single_string] ip ssh version 2\n");
    expect(problems).toEqual([]);
    expect(policy.rules[0]).toMatchObject({
      description: "must_match_single_string: ip ssh version 2",
      patterns: ["ip ssh version 2"],
    });
  });

  it("a // Description line right after a block's patterns starts the next block", () => {
    const { policy, problems } = parsePolicy(
      "// Description: a\n#[must_match_single_string]\nfoo\n// Description: b\n#[must_match_single_string]\nbar\n",
    );
    expect(problems).toEqual([]);
    expect(policy.rules.map((r) => [r.line, r.description, r.patterns])).toEqual([
      [1, "a", ["foo"]],
      [4, "b", ["bar"]],
    ]);
  });

  it("section lines parse into the rule's scope", () => {
    const { policy, problems } = parsePolicy(
      "// Description: s\n#[section: ^router bgp]\n#[section: ^ address-family ipv4]\n#[unless: ^ shutdown]\n#[must_match_single_string]\nneighbor\n",
    );
    expect(problems).toEqual([]);
    expect(policy.rules[0]!.section).toEqual({
      path: ["^router bgp", "^ address-family ipv4"],
      unless: ["^ shutdown"],
    });
  });
});

describe("parsePolicy: problems name the line and what is wrong", () => {
  const problemsOf = (definition: string) => parsePolicy(definition).problems;

  it("unknown method, with the closest real one", () => {
    expect(problemsOf("// Description: a\n#[must_match_singel_string]\nfoo\n")).toEqual([
      { line: 2, message: 'unknown method "must_match_singel_string"; did you mean "must_match_single_string"?' },
    ]);
    expect(problemsOf("// Description: a\n#[frobnicate]\nfoo\n")).toEqual([
      { line: 2, message: 'unknown method "frobnicate"' },
    ]);
  });

  it("block without patterns, block without a method, pattern before a method", () => {
    expect(problemsOf("// Description: a\n#[must_match_regex]\n\n// Description: b\n#[must_match_regex]\nx\n")).toEqual(
      [{ line: 2, message: "block without patterns: #[must_match_regex] needs at least one line after it" }],
    );
    expect(problemsOf("// Description: a\n\n// Description: b\n#[must_match_regex]\nx\n")).toEqual([
      { line: 1, message: "block without a #[method] line" },
    ]);
    expect(problemsOf("// Description: a\nntp server 1.1.1.1\n#[must_match_single_string]\nx\n")).toEqual([
      { line: 2, message: 'pattern line before a #[method] line: "ntp server 1.1.1.1"' },
    ]);
  });

  it("two methods in one block, two patterns for a single-string method", () => {
    expect(problemsOf("// Description: a\n#[must_match_regex]\nx\n#[must_not_match_regex]\ny\n")).toEqual([
      { line: 4, message: "a second method in one block (the first is on line 2); separate blocks with a blank line" },
    ]);
    expect(problemsOf("// Description: a\n#[must_match_single_string]\nx\ny\n")).toEqual([
      {
        line: 4,
        message: "must_match_single_string takes exactly one pattern, found 2; use an _from_array method for several",
      },
    ]);
  });

  it("regexes are compiled when the definition is read: syntax, flags, length, control characters", () => {
    expect(problemsOf("// Description: a\n#[must_match_regex]\nok\n^interface (Gi\n")).toEqual([
      { line: 4, message: "pattern is not a valid regular expression: missing closing ): `^interface (Gi`" },
    ]);
    // lookarounds and backreferences are not RE2: refused when saved, not at evaluation
    expect(problemsOf("// Description: a\n#[must_not_match_regex]\n(\\w+) \\1\n")[0]).toMatchObject({
      line: 3,
      message: expect.stringMatching(/^pattern uses a backreference \(\\1\), which RE2/),
    });
    expect(problemsOf("// Description: a\n#[must_match_regex]\n/ntp/x\n")).toEqual([
      { line: 3, message: 'unsupported regex flag "x" (supported: i, m, s, u)' },
    ]);
    expect(problemsOf(`// Description: a\n#[must_match_single_string]\n${"a".repeat(1001)}\n`)).toEqual([
      { line: 3, message: "pattern must be at most 1000 characters (this one has 1001)" },
    ]);
    expect(problemsOf("// Description: a\n#[must_match_single_string]\nfoo\u0007bar\n")).toEqual([
      {
        line: 3,
        message:
          "pattern must not contain control characters (found U+0007 at position 4); write \\n, \\t or \\x00 to match one",
      },
    ]);
  });

  it("section lines: a bad regex, after the patterns, unless without a section", () => {
    expect(
      problemsOf("// Description: a\n#[section: ^interface [Gi]\n#[must_match_single_string]\nx\n")[0],
    ).toMatchObject({ line: 2, message: expect.stringContaining("missing closing ]") });
    expect(problemsOf("// Description: a\n#[must_match_single_string]\nx\n#[section: ^interface]\n")).toEqual([
      { line: 4, message: "#[section: ...] must come before the block's patterns" },
    ]);
    expect(problemsOf("// Description: a\n#[unless: ^ shutdown]\n#[must_match_single_string]\nx\n")).toEqual([
      { line: 2, message: "#[unless: ...] without a #[section: ...] line in the same block" },
    ]);
  });

  it("an empty definition has no rules, and good blocks still parse beside broken ones", () => {
    expect(problemsOf("\n// just a comment\n\n")).toEqual([
      {
        line: 1,
        message: "the definition has no rules: write a // Description: line, a #[method] line and its patterns",
      },
    ]);
    const { policy, problems } = parsePolicy(
      "// Description: a\n#[nope]\nx\n\n// Description: b\n#[must_match_regex]\nfine\n",
    );
    expect(problems).toHaveLength(1);
    expect(policy.rules.map((r) => r.description)).toEqual(["b"]);
  });
});
