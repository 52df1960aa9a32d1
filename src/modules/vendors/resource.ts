import { z } from "@hono/zod-openapi";
import { eq, inArray, sql } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import { deviceProfiles, devices, vendors } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts, refuseDeleteWhileDevicesUse } from "../../platform/http/device-usage.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import type { DbOrTx } from "../../db/client.ts";
import { plural } from "../../kernel/words.ts";
import { singleLine } from "../../platform/http/text.ts";

const Vendor = z
  .object({
    id: z.number().int(),
    name: z.string(),
    devices_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Vendor");

const VendorInput = z
  .object({
    name: singleLine(
      z.string().trim().min(2, "must be at least 2 characters").max(64, "must be at most 64 characters"),
    ).openapi({ example: "Cisco" }),
  })
  .openapi("VendorInput");

type VendorRow = typeof vendors.$inferSelect;

/** How devices use vendors (shared counting: platform/http/device-usage.ts). */
const VENDOR_USE: DeviceUse = { columns: [devices.vendorId] };

export const vendorsResource = defineResource({
  tag: "Vendors",
  path: "/vendors",
  singular: "vendor",
  plural: "vendors",
  resource: "vendors",
  table: vendors,
  output: Vendor,
  input: VendorInput,
  listSpec: {
    fields: Object.keys(Vendor.shape),
    filters: { name: nameFilter(vendors.nameKey) },
    sorts: { id: vendors.id, name: sql`lower(${vendors.name})`, created_at: vendors.createdAt },
    defaultSort: "name",
    idColumn: vendors.id,
    search: { describe: "Substring of the name", build: (term) => containsText(vendors.name, term) },
  },
  reaches: async (_db, ids) => inArray(devices.vendorId, ids),
  async serialize(db, rows, scope) {
    const counts = await deviceCounts(
      db,
      VENDOR_USE,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as VendorRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      devices_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(ctx, vendors.nameKey, vendors.id, input.name, existing?.id ?? null, "name");
    return input.name === undefined ? {} : { name: input.name, nameKey };
  },
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    await refuseDeleteWhileDevicesUse(ctx.tx, VENDOR_USE, ids, "Vendor", () => "move them to another vendor first");
    const profiles = await ctx.tx
      .update(deviceProfiles)
      .set({ vendorId: null })
      .where(inArray(deviceProfiles.vendorId, ids))
      .returning({ id: deviceProfiles.id });
    return profiles.length ? `cleared from ${plural(profiles.length, "device profile")}` : undefined;
  },
  descriptions: {
    delete:
      "Refused with 409 while any device uses the vendor. Device profiles that name it lose their vendor default; the answer says how many.",
  },
});

export const vendorIdByName = async (db: DbOrTx, name: string) =>
  (
    await db
      .select({ id: vendors.id })
      .from(vendors)
      .where(eq(vendors.nameKey, nameKey(name)))
  )[0]?.id;
