import { z } from "@hono/zod-openapi";
import { and, count, eq, inArray, sql } from "drizzle-orm";
import { devices, LOCAL_ZONE_ID, remoteCollectors, tags, ZONE_MODES, zones, zoneTags } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { type DeviceScope, deviceScopeCondition } from "../../platform/auth/scope.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";
import { plural } from "../../kernel/words.ts";
import { hashSecret, newEnrollmentKey } from "./enrollment.ts";

const Zone = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    mode: z.enum(ZONE_MODES).openapi({
      description: "local: the collectors beside the API poll its devices; remote: only its enrolled site collectors",
    }),
    tag_ids: z.array(z.number().int()).openapi({ description: "Tags every device of the zone carries" }),
    devices_count: z.number().int(),
    collectors_count: z.number().int().openapi({ description: "Remote collectors enrolled and not revoked" }),
    has_enrollment_key: z.boolean(),
    enrollment_key: z.string().optional().openapi({
      description:
        "Only in the answer that created it (a new remote zone, or a local zone turned remote): the key site collectors enroll with (svc collector:remote --enroll). Shown once; only its hash is kept",
      example: "nkz_9hX0...",
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Zone");

const ZoneInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(64, "must be at most 64 characters")).openapi({
      example: "branch-ams",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Amsterdam office, behind NAT" }),
    mode: z
      .enum(ZONE_MODES, { error: `must be one of: ${ZONE_MODES.join(", ")}` })
      .optional()
      .openapi({ description: "local (the default) or remote", example: "remote" }),
    tag_ids: z
      .array(z.number().int().positive("must be a tag id"))
      .max(100, "must have at most 100 items")
      .optional()
      .openapi({ description: "Tags the zone's devices inherit (role scopes follow them)", example: [1] }),
  })
  .openapi("ZoneInput");

type ZoneRow = typeof zones.$inferSelect;

async function countsBy(db: DbOrTx, ids: number[], scope: DeviceScope) {
  if (!ids.length)
    return {
      devicesIn: new Map<number, number>(),
      collectorsIn: new Map<number, number>(),
      tagsOf: new Map<number, number[]>(),
    };
  const [deviceRows, collectorRows, tagRows] = await Promise.all([
    db
      .select({ id: devices.zoneId, n: count() })
      .from(devices)
      .where(and(inArray(devices.zoneId, ids), deviceScopeCondition(scope)))
      .groupBy(devices.zoneId),
    db
      .select({ id: remoteCollectors.zoneId, n: count() })
      .from(remoteCollectors)
      .where(and(inArray(remoteCollectors.zoneId, ids), sql`${remoteCollectors.revokedAt} is null`))
      .groupBy(remoteCollectors.zoneId),
    db.select().from(zoneTags).where(inArray(zoneTags.zoneId, ids)).orderBy(zoneTags.tagId),
  ]);
  const tagsOf = new Map<number, number[]>();
  for (const t of tagRows) (tagsOf.get(t.zoneId) ?? tagsOf.set(t.zoneId, []).get(t.zoneId)!).push(t.tagId);
  return {
    devicesIn: new Map(deviceRows.map((r) => [r.id, r.n])),
    collectorsIn: new Map(collectorRows.map((r) => [r.id, r.n])),
    tagsOf,
  };
}

/** A new enrollment key: its hash goes in the row, the key itself into this answer only. */
async function issueKey(ctx: WriteCtx): Promise<Record<string, unknown>> {
  const key = newEnrollmentKey();
  ctx.once = { ...ctx.once, enrollment_key: key };
  return { enrollmentKeyHash: await hashSecret(key), enrollmentKeyCreatedAt: ctx.now };
}

export const zonesResource = defineResource({
  tag: "Zones",
  path: "/zones",
  singular: "zone",
  plural: "zones",
  resource: "system",
  table: zones,
  output: Zone,
  input: ZoneInput,
  listSpec: {
    fields: Object.keys(Zone.shape).filter((f) => f !== "enrollment_key"),
    filters: {
      name: nameFilter(zones.nameKey),
      mode: {
        describe: "local or remote",
        build: (v) =>
          inArray(
            zones.mode,
            v.filter((m): m is (typeof ZONE_MODES)[number] => (ZONE_MODES as readonly string[]).includes(m)),
          ),
      },
    },
    sorts: { id: zones.id, name: sql`lower(${zones.name})`, created_at: zones.createdAt },
    defaultSort: "id",
    idColumn: zones.id,
    search: {
      describe: "Substring of the name or description",
      build: (term) => sql`(${containsText(zones.name, term)} or ${containsText(zones.description, term)})`,
    },
  },
  // A scoped user sees the zones that hold devices it sees, and nothing of the others.
  visibleTo: (scope) => {
    const inScope = deviceScopeCondition(scope);
    return inScope
      ? sql`exists (select 1 from ${devices} where ${devices.zoneId} = ${zones.id} and ${inScope})`
      : undefined;
  },
  reaches: async (_db, ids) => inArray(devices.zoneId, ids),
  async serialize(db, rows, scope) {
    const { devicesIn, collectorsIn, tagsOf } = await countsBy(
      db,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as ZoneRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      mode: r.mode,
      tag_ids: tagsOf.get(r.id) ?? [],
      devices_count: devicesIn.get(r.id) ?? 0,
      collectors_count: collectorsIn.get(r.id) ?? 0,
      has_enrollment_key: r.enrollmentKeyHash !== null,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(ctx, zones.nameKey, zones.id, input.name, existing?.id ?? null, "name");
    const defaults = ctx.mode === "patch" ? {} : { description: "", mode: "local" as const };
    const values: Record<string, unknown> = { ...defaults, ...input, nameKey };
    delete values.tag_ids;
    const mode = (values.mode ?? existing?.mode) as ZoneRow["mode"];
    if (existing?.id === LOCAL_ZONE_ID && mode !== "local")
      ctx.bag.add("mode", "mode of the local zone (1) stays local: create a remote zone and move devices to it");
    if (input.tag_ids) {
      const known = new Set(
        (await ctx.tx.select({ id: tags.id }).from(tags).where(inArray(tags.id, input.tag_ids))).map((t) => t.id),
      );
      input.tag_ids.forEach((id, i) => {
        if (!known.has(id)) ctx.bag.add(`tag_ids.${i}`, `tag_ids.${i} ${id} is not an existing tag`);
      });
    }
    // Becoming remote issues the key its collectors enroll with; becoming local retires it.
    if (mode === "remote" && !existing?.enrollmentKeyHash) Object.assign(values, await issueKey(ctx));
    if (mode === "local") Object.assign(values, { enrollmentKeyHash: null, enrollmentKeyCreatedAt: null });
    return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
  },
  async afterWrite(id, input, ctx) {
    const tagIds = input.tag_ids ?? (ctx.mode === "patch" ? undefined : []);
    if (!tagIds) return;
    await ctx.tx.delete(zoneTags).where(eq(zoneTags.zoneId, id));
    if (tagIds.length)
      await ctx.tx.insert(zoneTags).values([...new Set(tagIds)].map((tagId) => ({ zoneId: id, tagId })));
  },
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    if (ids.includes(LOCAL_ZONE_ID)) throw ApiError.conflict("The local zone (1) cannot be deleted");
    const [held] = await ctx.tx.select({ n: count() }).from(devices).where(inArray(devices.zoneId, ids));
    if (held?.n)
      throw ApiError.conflict(
        `The zone still holds ${plural(held.n, "device")}: move them to another zone (zone_id) first`,
      );
    const [enrolled] = await ctx.tx
      .select({ n: count() })
      .from(remoteCollectors)
      .where(inArray(remoteCollectors.zoneId, ids));
    // The collectors go with the zone (ON DELETE CASCADE): their next request is refused and they stop.
    return enrolled?.n ? `${plural(enrolled.n, "remote collector")} removed` : undefined;
  },
  descriptions: {
    create:
      "Answers 201 with the new zone in data and its URL in Location. A remote zone's answer carries enrollment_key, shown this once.",
    update:
      "Only the fields sent change. Turning a local zone remote answers its new enrollment_key once; turning it local retires the key (its collectors get no more jobs).",
    delete:
      "Refused with 409 for the local zone and for a zone that still holds devices; the zone's remote collectors are removed with it and stop.",
  },
});
