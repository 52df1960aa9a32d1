import type { BuiltinTemplate } from "./builtins.ts";
import type { InventorySource } from "./template-schema.ts";

/** What a model name in another tool's inventory becomes: a vendor and the built-in template (its key) that says so. */
export type InventoryModel = { vendor: string; template: string };

/** Per inventory source, each model name (lower case) with what it becomes. */
export type InventoryModels = Record<InventorySource, ReadonlyMap<string, InventoryModel>>;

/**
 * The model names the built-in templates claim (their `inventory_names`), for svc import:oxidized and
 * import:rancid. A name two templates claim is an error in the release: it stops the import and names both.
 */
export function inventoryModels(builtins: readonly BuiltinTemplate[]): InventoryModels {
  const table = (source: InventorySource) => {
    const models = new Map<string, InventoryModel>();
    for (const builtin of builtins) {
      for (const { name, vendor } of builtin.inventoryNames[source]) {
        const claimed = models.get(name);
        if (claimed && claimed.template !== builtin.key)
          throw new Error(
            `${source} model '${name}' is claimed by the templates ${claimed.template} and ${builtin.key}`,
          );
        models.set(name, { vendor, template: builtin.key });
      }
    }
    return models;
  };
  return { oxidized: table("oxidized"), rancid: table("rancid") };
}
