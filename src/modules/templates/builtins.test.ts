import { describe, expect, it } from "vitest";
import { loadBuiltinTemplates } from "../../runtime/builtin-templates.ts";
import { builtinVendor } from "./builtins.ts";
import { parseTemplate } from "./template-schema.ts";

describe("builtinVendor", () => {
  it("reads the vendor the YAML parser reads, for every shipped built-in", () => {
    const builtins = loadBuiltinTemplates();
    expect(builtins.length).toBeGreaterThan(10);
    for (const t of builtins) {
      const parsed = parseTemplate(t.code);
      expect(parsed.ok, t.key).toBe(true);
      expect(builtinVendor(t.code), t.key).toBe(parsed.ok ? (parsed.template.vendor ?? null) : null);
    }
  });

  it("takes a quoted value without its quotes and no vendor line as none", () => {
    expect(builtinVendor("description: x\nvendor: 'Allied Telesis'\n")).toBe("Allied Telesis");
    expect(builtinVendor("description: x\n")).toBeNull();
  });
});
