import type { ConfigFamily } from "./types.ts";

/** What a connection template says about how its configurations nest. */
export type TemplateNesting = { vendor?: string; protocol: string; nesting?: ConfigFamily };

/** How a template's stored configuration nests: as its `nesting` says, else by indentation (most CLIs, NETCONF's XML). */
export const templateNesting = (template: TemplateNesting): ConfigFamily => template.nesting ?? "indent";

/**
 * How each vendor's configurations nest, by lower-cased vendor name, for a device that has no template: the style
 * the vendor's CLI templates agree on, else indentation. NETCONF templates are left out (a device without a
 * template is not backed up over NETCONF). The templates hold the knowledge (their `nesting`); nothing here knows
 * a vendor by name.
 */
export function nestingByVendor(templates: readonly TemplateNesting[]): Map<string, ConfigFamily> {
  const styles = new Map<string, Set<ConfigFamily>>();
  for (const t of templates) {
    if (!t.vendor || t.protocol === "netconf") continue;
    const key = t.vendor.toLowerCase();
    (styles.get(key) ?? styles.set(key, new Set()).get(key)!).add(templateNesting(t));
  }
  return new Map([...styles].map(([vendor, seen]) => [vendor, seen.size === 1 ? [...seen][0]! : "indent"]));
}
