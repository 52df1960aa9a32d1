import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TEMPLATES_DIR } from "../../runtime/builtin-templates.ts";
import { renderStored } from "./render.ts";
import { parseTemplate } from "./template-schema.ts";
import { storedText } from "./template-text.ts";

const builtin = (key: string) => {
  const parsed = parseTemplate(readFileSync(join(BUILTIN_TEMPLATES_DIR, `${key}.yaml`), "utf8"));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.template;
};

describe("renderStored", () => {
  const ios = builtin("cisco-ios");
  const config = [
    "Building configuration...",
    "hostname r1",
    "enable secret 9 $9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM",
    "snmp-server community Comm-1 RO",
    "interface Gi0/1",
    " standby 1 authentication Hsrp-Text",
    " ip ospf message-digest-key 1 md5 0 Md5-Key",
    "ntp server 10.0.0.1 key 42",
  ].join("\n");

  it("answers the text storedText stores", () => {
    expect(renderStored(config, ios).text).toBe(storedText(config, ios));
  });

  it("locates every mask in the rendered text and names the rule behind it", () => {
    const { text, masks, lines_dropped } = renderStored(config, ios);
    expect(lines_dropped).toBe(1);
    const lines = text.split("\n");
    for (const m of masks) expect(lines[m.line - 1]!.slice(m.column - 1, m.column - 1 + m.length)).toBe(m.text);
    const byLine = masks.map((m) => [lines[m.line - 1], m.layer, m.rule]);
    expect(byLine).toEqual([
      ["enable secret 9 <secret hidden>", "template", "secrets[2]"],
      ["snmp-server community <secret hidden> RO", "template", "secrets[0]"],
      [" standby 1 authentication <secret hidden>", "generic", "authentication"],
      [" ip ospf message-digest-key 1 md5 0 <secret hidden>", "template", expect.stringMatching(/^secrets\[\d+\]$/)],
    ]);
    expect(masks.every((m) => m.text.includes("<secret hidden>"))).toBe(true);
    expect(masks.find((m) => m.layer === "template")!.pattern).toBe(ios.secrets[2]!.pattern);
  });

  it("keeps a template rule's span where a later rule or the generic layer changes the line before it", () => {
    const line = "snmp-server user U G v3 auth sha Auth-1 priv aes 128 Priv-1";
    const { text, masks } = renderStored(line, {
      filters: { drop: [], volatile: [] },
      secrets: [{ pattern: "(priv aes 128) \\S+", replace: "$1 <secret hidden>" }],
    });
    expect(text).toBe("snmp-server user U G v3 auth sha <secret hidden> priv aes 128 <secret hidden>");
    expect(masks.map((m) => [m.column, m.text, m.layer])).toEqual([
      [34, "<secret hidden>", "generic"],
      [63, "<secret hidden>", "template"],
    ]);
  });
});
