import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TEMPLATES_DIR } from "../../runtime/builtin-templates.ts";
import { parseTemplate } from "./template-schema.ts";
import { removeLines, removeSecrets } from "./template-text.ts";
import { mulberry32 } from "../../kernel/random.ts";

const text = [
  "hostname r1",
  "! Last change at 10:00",
  "interface Gi0/1",
  " description uplink",
  "!",
  "ntp clock-period 123",
  "aaa",
  "end",
].join("\n");

describe("removeLines", () => {
  it("drops each line any line filter matches, anywhere in the line unless anchored", () => {
    expect(removeLines(text, ["^! Last change", "clock-period"])).toBe(
      ["hostname r1", "interface Gi0/1", " description uplink", "!", "aaa", "end"].join("\n"),
    );
    expect(removeLines(text, ["^clock-period"])).toBe(text);
  });

  it("drops a block from a line matching `from` through the first line matching `to`", () => {
    expect(removeLines(text, [{ from: "^interface ", to: "^!$" }])).toBe(
      ["hostname r1", "! Last change at 10:00", "ntp clock-period 123", "aaa", "end"].join("\n"),
    );
    // No `to` after it: the block runs to the end.
    expect(removeLines(text, [{ from: "^ntp ", to: "^never$" }])).toBe(
      ["hostname r1", "! Last change at 10:00", "interface Gi0/1", " description uplink", "!"].join("\n"),
    );
  });

  it("lets the first filter in the list that matches a line decide, line filters around a block included", () => {
    // The block comes first, so the interface line opens it although a line filter also matches that line.
    expect(removeLines(text, ["^hostname", { from: "^interface ", to: "^!$" }, "^interface "])).toBe(
      ["! Last change at 10:00", "ntp clock-period 123", "aaa", "end"].join("\n"),
    );
    // The line filter comes first: the interface line alone goes, and no block opens.
    expect(removeLines(text, ["^hostname", "^interface ", { from: "^interface ", to: "^!$" }])).toBe(
      ["! Last change at 10:00", " description uplink", "!", "ntp clock-period 123", "aaa", "end"].join("\n"),
    );
  });

  it("keeps the meaning of filters with named groups beside others", () => {
    expect(removeLines(text, ["^(?<x>h)", "^(?<x>a)", "^(e)nd$"])).toBe(
      ["! Last change at 10:00", "interface Gi0/1", " description uplink", "!", "ntp clock-period 123"].join("\n"),
    );
  });

  it("runs users' filters in RE2: linear in the line, without back-references", () => {
    const line = "a".repeat(40);
    expect(removeLines(`${line}\nkeep`, [".*.*.*.*.*.*.*.*!", "(a|aa)+$"])).toBe("keep"); // seconds to minutes in JavaScript's engine
    expect(() => removeLines(text, ["^(\\w)\\1"])).toThrow(/uses a backreference .*, which RE2/);
  });
});

describe("removeSecrets", () => {
  it("runs the built-in templates' own patterns, lookahead included, in JavaScript's engine", () => {
    const parsed = parseTemplate(readFileSync(join(BUILTIN_TEMPLATES_DIR, "cisco-ios.yaml"), "utf8"));
    if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
    const config = "key chain OSPF\n  key-string 7 0822455D0A16\n tacacs-server key <hidden>";
    expect(removeSecrets(config, parsed.template.secrets)).toBe(
      "key chain OSPF\n  key-string 7 <secret hidden>\n tacacs-server key <hidden>",
    );
  });

  it("runs users' patterns in RE2, replacing with their groups", () => {
    const line = "a".repeat(40);
    const secrets = [
      { pattern: "(a|aa)+$", replace: "x" },
      { pattern: "^(snmp-server community) (\\S+)", replace: "$1 <$2 hidden>" },
    ];
    expect(removeSecrets(`${line}?\nsnmp-server community public RO`, secrets)).toBe(
      `${line}?\nsnmp-server community <public hidden> RO`,
    );
  });
});

describe("removeLines over the whole text", () => {
  it("keeps exactly the lines a line-by-line pass keeps, blocks and empty lines included", () => {
    const filters = ["^drop", "x$", { from: "^begin", to: "^end" }, { from: "^open", to: "^never" }];
    const line = [/^drop/, /x$/];
    const byLine = (text: string) => {
      const kept: string[] = [];
      let closing: RegExp | null = null;
      for (const l of text.split("\n")) {
        if (closing) {
          if (closing.test(l)) closing = null;
          continue;
        }
        if (line.some((re) => re.test(l))) continue;
        if (/^begin/.test(l)) closing = /^end/.test(l) ? null : /^end/;
        else if (/^open/.test(l)) closing = /^never/;
        else kept.push(l);
      }
      return kept.join("\n");
    };
    const rnd = mulberry32(11);
    const pieces = ["drop me", "keep", "tax", "begin", "begin end", "end", "open", "", " ", "hostname r1"];
    for (let i = 0; i < 3000; i++) {
      const text = Array.from(
        { length: Math.floor(rnd() * 12) },
        () => pieces[Math.floor(rnd() * pieces.length)]!,
      ).join("\n");
      expect(removeLines(text, filters), JSON.stringify(text)).toBe(byLine(text));
    }
  });
});
