import { describe, expect, it } from "vitest";
import { loadBuiltinTemplates } from "../../../runtime/builtin-templates.ts";
import { parseTemplate } from "../../templates/template-schema.ts";
import { nestingByVendor, templateNesting } from "./family.ts";

const shipped = loadBuiltinTemplates().map((t) => {
  const parsed = parseTemplate(t.code);
  if (!parsed.ok) throw new Error(`${t.key} does not parse`);
  return { key: t.key, template: parsed.template };
});
const templateOf = (key: string) => shipped.find((t) => t.key === key)!.template;

describe("how configurations nest, from the templates", () => {
  it("a template nests as its `nesting` says, else by indentation (NETCONF's XML included)", () => {
    expect(templateNesting(templateOf("juniper-junos"))).toBe("braces");
    expect(templateNesting(templateOf("vyos"))).toBe("braces");
    expect(templateNesting(templateOf("fortinet-fortios"))).toBe("fortios");
    expect(templateNesting(templateOf("cisco-ios"))).toBe("indent");
    expect(templateNesting(templateOf("juniper-junos-netconf"))).toBe("indent");
  });

  it("a vendor nests as its CLI templates agree, NETCONF ones left out, else by indentation", () => {
    const byVendor = nestingByVendor(shipped.map((t) => t.template));
    expect(byVendor.get("juniper"), "junos and screenos agree; junos over NETCONF does not count").toBe("braces");
    expect(byVendor.get("vyos")).toBe("braces");
    expect(byVendor.get("fortinet")).toBe("fortios");
    expect(byVendor.get("cisco")).toBe("indent");
    expect(byVendor.get("ubiquiti"), "EdgeOS (set lines) and EdgeSwitch (indented) disagree").toBe("indent");
    expect(byVendor.has("nobody")).toBe(false);
  });

  it("knows no vendor by name: a template's `nesting` decides", () => {
    const byVendor = nestingByVendor([
      { vendor: "Acme", protocol: "ssh", nesting: "braces" },
      { vendor: "Acme", protocol: "netconf" },
      { vendor: "Juniper", protocol: "ssh" },
    ]);
    expect(byVendor.get("acme")).toBe("braces");
    expect(byVendor.get("juniper")).toBe("indent");
  });
});
