import { describe, expect, it } from "vitest";
import type { BuiltinTemplate } from "./builtins.ts";
import { inventoryModels } from "./inventory-models.ts";
import { parseTemplate } from "./template-schema.ts";

const BASE = ["prompt: '[#>] ?$'", "commands: [show running-config]"];

/** A built-in as the launcher reads it (src/runtime/builtin-templates.ts), from its YAML lines. */
function builtin(key: string, ...lines: string[]): BuiltinTemplate {
  const code = [...lines, ...BASE].join("\n");
  const parsed = parseTemplate(code);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const { vendor, also_sold_as, inventory_names } = parsed.template;
  return { key, code, description: "", vendors: [vendor!, ...also_sold_as], inventoryNames: inventory_names };
}

describe("inventory_names in a template", () => {
  it("maps each name, in any case, to the template and its vendor, or to another name it is sold under", () => {
    const models = inventoryModels([
      builtin(
        "acme-os",
        "vendor: Acme",
        "also_sold_as: [Roadrunner]",
        "inventory_names: { oxidized: [AcmeOS, acme], rancid: [{ name: rr, vendor: Roadrunner }] }",
      ),
      builtin("other-os", "vendor: Other"),
    ]);
    expect([...models.oxidized]).toEqual([
      ["acmeos", { vendor: "Acme", template: "acme-os" }],
      ["acme", { vendor: "Acme", template: "acme-os" }],
    ]);
    expect([...models.rancid]).toEqual([["rr", { vendor: "Roadrunner", template: "acme-os" }]]);
  });

  it("refuses a vendor the template does not name, and names without a vendor", () => {
    const wrongVendor = parseTemplate(
      ["vendor: Acme", "inventory_names: { rancid: [{ name: rr, vendor: Coyote }] }", ...BASE].join("\n"),
    );
    expect(wrongVendor.ok).toBe(false);
    expect(!wrongVendor.ok && wrongVendor.errors).toMatchObject([
      {
        key: "inventory_names.rancid.0.vendor",
        message: expect.stringMatching(/must be the template's vendor or one of also_sold_as$/),
      },
    ]);
    const noVendor = parseTemplate(["inventory_names: { oxidized: [acme] }", ...BASE].join("\n"));
    expect(!noVendor.ok && noVendor.errors).toMatchObject([
      { key: "inventory_names.oxidized.0", message: expect.stringMatching(/needs the template's vendor$/) },
    ]);
  });

  it("stops at a name two templates claim, naming both", () => {
    expect(() =>
      inventoryModels([
        builtin("acme-os", "vendor: Acme", "inventory_names: { oxidized: [acme] }"),
        builtin("acme-nx", "vendor: Acme", "inventory_names: { oxidized: [ACME] }"),
      ]),
    ).toThrow("oxidized model 'acme' is claimed by the templates acme-os and acme-nx");
  });
});
