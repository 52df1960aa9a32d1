import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuiltinTemplate } from "../modules/templates/index.ts";
import { parseTemplate } from "../modules/templates/index.ts";

export const BUILTIN_TEMPLATES_DIR = fileURLToPath(new URL("../../collector/templates/", import.meta.url));

/**
 * Reads the built-in connection templates (collector/templates/*.yaml) for seeding. A file that does not
 * parse stops the start with its name and problems: a release must never ship a broken template.
 */
export function loadBuiltinTemplates(dir: string = BUILTIN_TEMPLATES_DIR): BuiltinTemplate[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort();
  if (!files.length) throw new Error(`no built-in templates (*.yaml) in ${dir}`);
  return files.map((file) => {
    const code = readFileSync(join(dir, file), "utf8");
    const parsed = parseTemplate(code);
    if (!parsed.ok)
      throw new Error(`built-in template ${file} is invalid: ${parsed.errors.map((e) => e.message).join("; ")}`);
    const { vendor, also_sold_as, description, inventory_names } = parsed.template;
    return {
      key: file.slice(0, -".yaml".length),
      code,
      description: description ?? "",
      vendors: [...(vendor ? [vendor] : []), ...also_sold_as],
      inventoryNames: inventory_names,
    };
  });
}
