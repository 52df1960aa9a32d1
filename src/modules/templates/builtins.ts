import { eq, isNotNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { templates } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";
import type { InventorySource } from "./template-schema.ts";

/** One file of collector/templates/, as the launcher read it: its name without .yaml, its text and description. */
export type BuiltinTemplate = {
  key: string;
  code: string;
  description: string;
  /** The vendor names it fits (`vendor`, then `also_sold_as`): the vendors seeded at start. */
  vendors: string[];
  /** Its `inventory_names`: the model names other tools' inventories give its devices, each with its vendor. */
  inventoryNames: Record<InventorySource, { name: string; vendor: string }[]>;
};

/**
 * Brings the built-in templates up to date, matched by their key (the file name): a new release rewrites
 * their code and description; templates users made (builtin_key null) are never touched. A new built-in whose
 * name a user template already has is named "<key> (built-in)", so the user's name stays theirs. A built-in
 * that a release no longer ships becomes a user template, so the devices using it keep working.
 */
export async function seedBuiltinTemplates(tx: DbOrTx, builtins: readonly BuiltinTemplate[], now: Date): Promise<void> {
  const rows = await tx
    .select({
      id: templates.id,
      name: templates.name,
      builtinKey: templates.builtinKey,
      code: templates.code,
      description: templates.description,
    })
    .from(templates);
  const byKey = new Map(rows.flatMap((r) => (r.builtinKey ? [[r.builtinKey, r] as const] : [])));
  const names = new Set(rows.map((r) => nameKey(r.name)));

  for (const t of builtins) {
    const row = byKey.get(t.key);
    if (row) {
      if (row.code !== t.code || row.description !== t.description) {
        await tx
          .update(templates)
          .set({ code: t.code, description: t.description, updatedAt: now })
          .where(eq(templates.id, row.id));
      }
      continue;
    }
    let name = t.key;
    for (let n = 1; names.has(nameKey(name)); n++) name = `${t.key} (built-in${n === 1 ? "" : ` ${n}`})`;
    names.add(nameKey(name));
    // Another process migrating at the same moment may have inserted it: that row is just as good.
    await tx
      .insert(templates)
      .values({
        name,
        nameKey: nameKey(name),
        description: t.description,
        code: t.code,
        builtinKey: t.key,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
  }

  const shipped = new Set(builtins.map((t) => t.key));
  for (const row of byKey.values()) {
    if (!shipped.has(row.builtinKey!))
      await tx.update(templates).set({ builtinKey: null, updatedAt: now }).where(eq(templates.id, row.id));
  }
}

/**
 * The vendor a built-in template names. Built-ins are the project's own files, where `vendor:` is a plain
 * top-level scalar (builtins.test.ts holds this to the YAML parser for every shipped file), so a line match
 * reads it without parsing 40-odd templates on every device write.
 */
export function builtinVendor(code: string): string | null {
  const value = /^vendor:[ \t]*(.*?)[ \t]*$/m.exec(code)?.[1];
  if (!value) return null;
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}

/**
 * Built-in template ids by the name key of the vendor they name. NETCONF built-ins are left out: a device is backed
 * up over NETCONF when someone chooses it (the device must have it turned on), so a vendor's CLI template stays
 * its only one, the default for its new devices.
 */
export async function builtinTemplatesByVendor(db: DbOrTx): Promise<Map<string, number[]>> {
  const rows = await db
    .select({ id: templates.id, code: templates.code })
    .from(templates)
    .where(isNotNull(templates.builtinKey));
  const byVendor = new Map<string, number[]>();
  for (const r of rows) {
    if (/^protocol:[ \t]*netconf[ \t]*$/m.test(r.code)) continue;
    const vendor = builtinVendor(r.code);
    if (vendor) (byVendor.get(nameKey(vendor)) ?? byVendor.set(nameKey(vendor), []).get(nameKey(vendor))!).push(r.id);
  }
  return byVendor;
}
