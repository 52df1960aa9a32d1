import { asc } from "drizzle-orm";
import type { Ability } from "../../platform/auth/abilities.ts";
import type { DbOrTx } from "../../db/client.ts";
import { categories, DEVICE_STATUSES, tags, vendors } from "../../db/schema/index.ts";

/**
 * What the device list's filters offer as choices (filter[device_tags], filter[device_category_id],
 * filter[device_vendor], filter[status]), by name. Tags, categories and vendors only for a role that may list them
 * through the API (null otherwise: the caller types a name); those lists show every row to such a role.
 */
export async function deviceFilterChoices(db: DbOrTx, abilities: ReadonlySet<Ability>) {
  const [tagRows, categoryRows, vendorRows] = await Promise.all([
    abilities.has("tags.read") ? db.select({ name: tags.name }).from(tags).orderBy(asc(tags.nameKey)) : null,
    abilities.has("categories.read")
      ? db.select({ id: categories.id, name: categories.name }).from(categories).orderBy(asc(categories.nameKey))
      : null,
    abilities.has("vendors.read")
      ? db.select({ name: vendors.name }).from(vendors).orderBy(asc(vendors.nameKey))
      : null,
  ]);
  return {
    tags: tagRows && tagRows.map((t) => t.name),
    categories: categoryRows,
    vendors: vendorRows && vendorRows.map((v) => v.name),
    statuses: DEVICE_STATUSES,
  };
}
