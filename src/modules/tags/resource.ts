import { z } from "@hono/zod-openapi";
import { inArray, sql } from "drizzle-orm";
import { deviceProfiles, deviceTags, devices, tags } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts } from "../../platform/http/device-usage.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import { plural } from "../../kernel/words.ts";
import { refuseIfScopingRoles } from "../../platform/auth/scope.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

const Tag = z
  .object({
    id: z.number().int(),
    name: z.string(),
    color: z.string(),
    description: z.string(),
    devices_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Tag");

const TagInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(64, "must be at most 64 characters")).openapi({
      example: "core",
    }),
    color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, "must be a colour like #1f6feb")
      .optional()
      .openapi({ example: "#1f6feb" }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Core routers" }),
  })
  .openapi("TagInput");

type TagRow = typeof tags.$inferSelect;

/** How devices use tags (shared counting: platform/http/device-usage.ts). */
const TAG_USE: DeviceUse = { key: deviceTags.tagId, device: deviceTags.deviceId };

export const tagsResource = defineResource({
  tag: "Tags",
  path: "/tags",
  singular: "tag",
  plural: "tags",
  resource: "tags",
  table: tags,
  output: Tag,
  input: TagInput,
  listSpec: {
    fields: Object.keys(Tag.shape),
    filters: {
      name: nameFilter(tags.nameKey),
      color: {
        describe: "Colour, e.g. #1f6feb",
        build: (v) =>
          inArray(
            sql`lower(${tags.color})`,
            v.map((s) => s.toLowerCase()),
          ),
      },
    },
    sorts: { id: tags.id, name: sql`lower(${tags.name})`, created_at: tags.createdAt },
    defaultSort: "name",
    idColumn: tags.id,
    search: {
      describe: "Substring of the name or description",
      build: (term) => sql`(${containsText(tags.name, term)} or ${containsText(tags.description, term)})`,
    },
  },
  reaches: async (_db, ids) =>
    inArray(
      devices.id,
      sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, ids)})`,
    ),
  async serialize(db, rows, scope) {
    const counts = await deviceCounts(
      db,
      TAG_USE,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as TagRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      color: r.color,
      description: r.description,
      devices_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(ctx, tags.nameKey, tags.id, input.name, existing?.id ?? null, "name");
    const defaults = ctx.mode === "patch" ? {} : { color: "#6b7280", description: "" };
    return Object.fromEntries(Object.entries({ ...defaults, ...input, nameKey }).filter(([, v]) => v !== undefined));
  },
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    await refuseIfScopingRoles(ctx.tx, "tag", ids);
    const devicesDetached = [...(await deviceCounts(ctx.tx, TAG_USE, ids, { all: true })).values()].reduce(
      (a, b) => a + b,
      0,
    );
    let profilesDetached = 0;
    for (const p of await ctx.tx
      .select({ id: deviceProfiles.id, tagIds: deviceProfiles.tagIds })
      .from(deviceProfiles)) {
      if (!p.tagIds.some((t) => ids.includes(t))) continue;
      profilesDetached++;
      await ctx.tx
        .update(deviceProfiles)
        .set({ tagIds: p.tagIds.filter((t) => !ids.includes(t)) })
        .where(sql`${deviceProfiles.id} = ${p.id}`);
    }
    const parts = [
      devicesDetached && `removed from ${plural(devicesDetached, "device")}`,
      profilesDetached && `removed from ${plural(profilesDetached, "device profile")}`,
    ];
    return parts.filter(Boolean).join(" and ") || undefined;
  },
  descriptions: {
    delete:
      "Removes the tag from its devices and device profiles (the answer says how many). Refused with 409 while a role's device scope names the tag.",
  },
});
