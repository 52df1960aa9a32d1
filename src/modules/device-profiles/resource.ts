import { z } from "@hono/zod-openapi";
import { eq, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { nameKey } from "../../db/name-key.ts";
import { categories, credentials, deviceProfiles, devices, tags, templates, vendors } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts } from "../../platform/http/device-usage.ts";
import { containsText } from "../../platform/http/list.ts";
import { refuseUnlessUsable } from "../credentials/index.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { idFilter } from "../../platform/http/filters.ts";
import { plural } from "../../kernel/words.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

const DeviceProfile = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    vendor: z.string().nullable(),
    vendor_id: z.number().int().nullable(),
    template_id: z.number().int().nullable(),
    category_id: z.number().int().nullable(),
    cred_id: z.number().int().nullable(),
    snippet_cred_id: z.number().int().nullable(),
    port: z.number().int().nullable(),
    tags: z.array(z.string()),
    devices_count: z
      .number()
      .int()
      .openapi({ description: "Devices created with the profile (they keep their values when it changes)" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("DeviceProfile");

const ref = (what: string) =>
  z
    .number({ error: `must be the numeric id of a ${what}` })
    .int("must be a whole number")
    .positive("must be a positive id")
    .nullable()
    .optional()
    .openapi({ description: `Default ${what} (id); null: none`, example: 1 });

const DeviceProfileInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters")).openapi({
      example: "Branch router",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "ISR at a branch office" }),
    vendor: singleLine(z.string().max(255, "must be at most 255 characters"))
      .nullable()
      .optional()
      .openapi({ description: "Default vendor by name (any case), or give vendor_id; null: none", example: "Cisco" }),
    vendor_id: ref("vendor"),
    template_id: ref("connection template"),
    category_id: ref("category (command group)"),
    cred_id: ref("credential set"),
    snippet_cred_id: ref("credential set for snippet pushes"),
    port: z
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(65535, "must be at most 65535")
      .nullable()
      .optional()
      .openapi({ description: "Default port override; null: the template's port", example: 22 }),
    tags: z
      .array(singleLine(z.string().trim().min(1, "must not be empty").max(64, "must be at most 64 characters")))
      .max(100, "must have at most 100 items")
      .optional()
      .openapi({ description: "Default tag names; unknown names are created (as for devices)", example: ["branch"] }),
  })
  .openapi("DeviceProfileInput");

type ProfileRow = typeof deviceProfiles.$inferSelect;
type Values = Partial<typeof deviceProfiles.$inferInsert>;

/** How devices use device profiles (shared counting: platform/http/device-usage.ts). */
const PROFILE_USE: DeviceUse = { columns: [devices.profileId] };

/** A referenced id must exist; null (or left out) means no default. */
async function checkRef(
  ctx: WriteCtx,
  field: string,
  id: number | null | undefined,
  table: SQLiteTable,
  idColumn: SQLiteColumn,
  what: string,
) {
  if (id === undefined || id === null) return;
  const [row] = await ctx.tx.select({ id: idColumn }).from(table).where(eq(idColumn, id)).limit(1);
  if (!row) ctx.bag.add(field, `${field} ${id} is not an existing ${what}`);
}

/** The vendor column from `vendor` (a name) or `vendor_id`; both may be sent if they agree. */
async function resolveVendor(
  ctx: WriteCtx,
  input: { vendor?: string | null; vendor_id?: number | null },
): Promise<number | null | undefined> {
  let byName: number | null | undefined;
  if (input.vendor === null || input.vendor === "") byName = null;
  else if (input.vendor !== undefined) {
    const [row] = await ctx.tx
      .select({ id: vendors.id })
      .from(vendors)
      .where(eq(vendors.nameKey, nameKey(input.vendor)));
    if (!row) {
      const names = (await ctx.tx.select({ name: vendors.name }).from(vendors).orderBy(vendors.name)).map(
        (v) => v.name,
      );
      ctx.bag.add("vendor", `vendor '${input.vendor}' is not a known vendor; use one of: ${names.join(", ")}`);
      return undefined;
    }
    byName = row.id;
  }
  await checkRef(ctx, "vendor_id", input.vendor_id, vendors, vendors.id, "vendor");
  if (byName !== undefined && input.vendor_id !== undefined && byName !== input.vendor_id) {
    ctx.bag.add(
      "vendor_id",
      `vendor_id ${input.vendor_id} is not the vendor named '${input.vendor}'; send one of them`,
    );
  }
  return byName !== undefined ? byName : input.vendor_id;
}

export const deviceProfilesResource = defineResource({
  tag: "Device profiles",
  path: "/device-profiles",
  singular: "device profile",
  plural: "device profiles",
  resource: "deviceprofiles",
  table: deviceProfiles,
  output: DeviceProfile,
  input: DeviceProfileInput,
  listSpec: {
    fields: Object.keys(DeviceProfile.shape),
    filters: {
      id: idFilter(deviceProfiles.id, "id", "Device profile id"),
      name: nameFilter(deviceProfiles.nameKey),
      vendor: {
        describe: "Vendor name (any case)",
        build: (v) =>
          inArray(
            deviceProfiles.vendorId,
            sql`(select ${vendors.id} from ${vendors} where ${inArray(vendors.nameKey, v.map(nameKey))})`,
          ),
      },
      vendor_id: idFilter(deviceProfiles.vendorId, "vendor_id", "Vendor id"),
      template_id: idFilter(deviceProfiles.templateId, "template_id", "Template id"),
      category_id: idFilter(deviceProfiles.categoryId, "category_id", "Category id"),
      cred_id: idFilter(deviceProfiles.credId, "cred_id", "Credential set id"),
    },
    sorts: {
      id: deviceProfiles.id,
      name: sql`lower(${deviceProfiles.name})`,
      created_at: deviceProfiles.createdAt,
      updated_at: deviceProfiles.updatedAt,
    },
    defaultSort: "name",
    idColumn: deviceProfiles.id,
    search: {
      describe: "Substring of the name or description",
      build: (term) =>
        sql`(${containsText(deviceProfiles.name, term)} or ${containsText(deviceProfiles.description, term)})`,
    },
  },
  reaches: async (_db, ids) => inArray(devices.profileId, ids),
  async serialize(db, rows, scope) {
    const profiles = rows as ProfileRow[];
    const vendorIds = [...new Set(profiles.flatMap((p) => (p.vendorId ? [p.vendorId] : [])))];
    const tagIds = [...new Set(profiles.flatMap((p) => p.tagIds))];
    const [counts, vendorRows, tagRows] = await Promise.all([
      deviceCounts(
        db,
        PROFILE_USE,
        profiles.map((p) => p.id),
        scope,
      ),
      vendorIds.length
        ? db.select({ id: vendors.id, name: vendors.name }).from(vendors).where(inArray(vendors.id, vendorIds))
        : [],
      tagIds.length ? db.select({ id: tags.id, name: tags.name }).from(tags).where(inArray(tags.id, tagIds)) : [],
    ]);
    const vendorName = new Map(vendorRows.map((v) => [v.id, v.name]));
    const tagName = new Map(tagRows.map((t) => [t.id, t.name]));
    return profiles.map((p) => ({
      id: p.id,
      name: p.name,
      description: p.description,
      vendor: p.vendorId ? (vendorName.get(p.vendorId) ?? null) : null,
      vendor_id: p.vendorId,
      template_id: p.templateId,
      category_id: p.categoryId,
      cred_id: p.credId,
      snippet_cred_id: p.snippetCredId,
      port: p.port,
      tags: p.tagIds
        .map((id) => tagName.get(id))
        .filter((n): n is string => n !== undefined)
        .sort(), // as devices list theirs
      devices_count: counts.get(p.id) ?? 0,
      created_at: p.createdAt.toISOString(),
      updated_at: p.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(
      ctx,
      deviceProfiles.nameKey,
      deviceProfiles.id,
      input.name,
      existing?.id ?? null,
      "name",
    );
    await checkRef(ctx, "template_id", input.template_id, templates, templates.id, "template");
    await checkRef(ctx, "category_id", input.category_id, categories, categories.id, "category");
    await checkRef(ctx, "cred_id", input.cred_id, credentials, credentials.id, "credential set");
    await checkRef(ctx, "snippet_cred_id", input.snippet_cred_id, credentials, credentials.id, "credential set");
    const vendorId = await resolveVendor(ctx, input);
    // A profile hands its sets to the devices made from it: naming one is using it (credentials/use.ts).
    for (const field of ["cred_id", "snippet_cred_id"] as const) {
      const setId = input[field];
      const had = existing?.[field === "cred_id" ? "credId" : "snippetCredId"];
      if (setId && setId !== had && ctx.bag.empty) await refuseUnlessUsable(ctx.tx, ctx.auth, setId, field);
    }

    // create and PUT: what the body leaves out has no default; PATCH: only what was sent changes.
    const v: Values =
      ctx.mode === "patch"
        ? {}
        : {
            description: "",
            vendorId: null,
            templateId: null,
            categoryId: null,
            credId: null,
            snippetCredId: null,
            port: null,
          };
    if (input.name !== undefined) Object.assign(v, { name: input.name, nameKey });
    if (input.description !== undefined) v.description = input.description;
    if (vendorId !== undefined) v.vendorId = vendorId;
    if (input.template_id !== undefined) v.templateId = input.template_id;
    if (input.category_id !== undefined) v.categoryId = input.category_id;
    if (input.cred_id !== undefined) v.credId = input.cred_id;
    if (input.snippet_cred_id !== undefined) v.snippetCredId = input.snippet_cred_id;
    if (input.port !== undefined) v.port = input.port;
    return v;
  },
  async afterWrite(id, input, ctx) {
    const names = input.tags ?? (ctx.mode === "patch" ? undefined : []);
    if (names === undefined) return;
    const tagIds: number[] = [];
    for (const name of new Map(names.map((n) => [nameKey(n), n])).values()) {
      const [found] = await ctx.tx
        .select({ id: tags.id })
        .from(tags)
        .where(eq(tags.nameKey, nameKey(name)));
      const tagId =
        found?.id ??
        (
          await ctx.tx
            .insert(tags)
            .values({ name, nameKey: nameKey(name), createdAt: ctx.now, updatedAt: ctx.now })
            .returning({ id: tags.id })
        )[0]!.id;
      tagIds.push(tagId);
    }
    await ctx.tx.update(deviceProfiles).set({ tagIds }).where(eq(deviceProfiles.id, id));
  },
  async beforeDelete(rows, ctx) {
    const total = [
      ...(
        await deviceCounts(
          ctx.tx,
          PROFILE_USE,
          rows.map((r) => r.id),
          { all: true },
        )
      ).values(),
    ].reduce((a, b) => a + b, 0);
    // devices.profile_id is ON DELETE SET NULL: the devices keep every value they took from the profile.
    const it = rows.length === 1 ? "it" : "them";
    return total
      ? `${plural(total, "device")} no longer reference${total === 1 ? "s" : ""} ${it} and keep${total === 1 ? "s" : ""} the values ${it} gave`
      : undefined;
  },
  descriptions: {
    create:
      "A device created with device_profile_id takes the profile's vendor, template, category, credentials, snippet credentials, port and tags " +
      "for each of those it does not set itself. Referenced ids must exist; unknown tag names are created, as for devices.",
    update: "Changing a profile never changes devices already created with it.",
    delete:
      "Devices created with the profile keep the values they took from it and no longer reference it; the answer says how many.",
  },
});
