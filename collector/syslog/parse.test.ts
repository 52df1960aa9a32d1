import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseTemplate } from "../../src/modules/templates/template-schema.ts";
import { compileTemplatePattern } from "../../src/modules/templates/template-patterns.ts";
import { parseSyslog } from "./parse.ts";

describe("parseSyslog", () => {
  it("reads RFC 5424, structured data (with escapes) left out of the text, app name and message id kept", () => {
    const m = parseSyslog(
      `<189>1 2026-11-28T21:00:00.000Z mx1 mgd 4242 UI_COMMIT [junos@2636 username="ad\\"min" x="a\\]b"][meta seq="1"] \uFEFFUser 'admin' requested 'commit' operation`,
    );
    expect(m).toEqual({
      facility: 23,
      severity: 5,
      format: "rfc5424",
      hostname: "mx1",
      text: "mgd: UI_COMMIT: User 'admin' requested 'commit' operation",
    });
    expect(parseSyslog("<13>1 - - - - - - hello")).toMatchObject({
      format: "rfc5424",
      hostname: undefined,
      text: "hello",
    });
  });

  it("reads RFC 3164 loosely: what follows the priority is the text", () => {
    expect(
      parseSyslog(
        "<189>123: *Nov 28 21:00:00.123: %SYS-5-CONFIG_I: Configured from console by admin on vty0 (10.0.0.5)\n",
      ),
    ).toEqual({
      facility: 23,
      severity: 5,
      format: "rfc3164",
      hostname: undefined,
      text: "123: *Nov 28 21:00:00.123: %SYS-5-CONFIG_I: Configured from console by admin on vty0 (10.0.0.5)",
    });
    expect(parseSyslog("<13>Nov  8 21:00:00 sw1 app: hello")).toMatchObject({
      hostname: "sw1",
      text: "Nov  8 21:00:00 sw1 app: hello",
    });
  });

  it.each(["", "hello", "<>x", "<192>x", "<013>x", "<13>", `<13>${"x".repeat(9000)}`])("refuses %j", (raw) => {
    expect(parseSyslog(raw)).toBeUndefined();
  });
});

describe("built-in templates' syslog rules", () => {
  const dir = new URL("../templates/", import.meta.url);
  const rules = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .flatMap((file) => {
      const parsed = parseTemplate(readFileSync(new URL(file, dir), "utf8"));
      return parsed.ok
        ? (parsed.template.syslog?.changed ?? []).map((rule, i) => [`${file} #${i}`, rule] as const)
        : [];
    });

  it("cover the families the issue names", () => {
    const files = new Set(rules.map(([name]) => name.split(" ")[0]));
    for (const f of [
      "cisco-ios.yaml",
      "cisco-nxos.yaml",
      "arista-eos.yaml",
      "juniper-junos.yaml",
      "fortinet-fortios.yaml",
      "paloalto-panos.yaml",
    ])
      expect(files).toContain(f);
  });

  it.each(rules)("%s takes its example, as received, apart into user, source and line", (_, rule) => {
    const message = parseSyslog(rule.example!)!;
    const m = compileTemplatePattern(rule.pattern, "line").exec(message.text)!;
    expect(m).not.toBeNull();
    for (const key of ["user", "source", "line"] as const) {
      if (rule[key] !== undefined) expect(m[rule[key]!], key).toMatch(/^[\w./:-]+$/);
    }
    if (rule.source !== undefined) expect(m[rule.source]).toBe("10.0.0.5");
  });
});

describe("a template's syslog section", () => {
  it.each([
    [
      "syslog:\n  changed:\n    - pattern: 'CONFIG_I by (\\S+)'\n      user: 2\n",
      "syslog.changed.0.user",
      "refers to group 2, but the pattern has 1 group",
    ],
    [
      "syslog:\n  changed:\n    - pattern: 'CONFIG_I'\n      example: 'nothing here'\n",
      "syslog.changed.0.example",
      "is not matched by the pattern",
    ],
    ["syslog:\n  changed: []\n", "syslog.changed", "must have at least 1 item"],
  ])("refuses %j", (section, key, problem) => {
    const parsed = parseTemplate(`prompt: '#$'\ncommands: [show run]\n${section}`);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.find((e) => e.key === key)?.message).toContain(problem);
  });
});
