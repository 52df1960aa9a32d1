import { z } from "@hono/zod-openapi";
import { and, count, eq, gte, inArray, lt, ne, or, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { activityLog, devices } from "../../db/schema/index.ts";
import { ApiError } from "../../http/errors.ts";
import { containsText, type ListQuery, type ListSpec } from "../../http/list.ts";
import { idFilter, wholeNumbers, instantValue } from "../../http/filters.ts";

export const ActivityEntry = z
  .object({
    id: z.number().int(),
    user_id: z.number().int().nullable().openapi({ description: "The acting user; null for the system, or kept after the user was deleted" }),
    username: z.string().nullable().openapi({ description: "The acting user's name at the time (kept after the user is deleted), or the system task" }),
    token_name: z.string().nullable(),
    ip: z.string().nullable(),
    action: z.string().openapi({ example: "device.update" }),
    subject_type: z.string().openapi({ example: "device" }),
    subject_id: z.number().int().nullable(),
    changes: z.record(z.string(), z.object({ old: z.unknown(), new: z.unknown() }))
      .openapi({ description: "Changed fields with old and new values; secrets appear only as has_* flags", example: { device_ip: { old: "192.0.2.1", new: "192.0.2.2" } } }),
    created_at: z.string(),
  })
  .openapi("ActivityEntry");

export type ActivityOut = z.infer<typeof ActivityEntry>;
type ActivityRow = typeof activityLog.$inferSelect;


export const activityListSpec: ListSpec = {
  fields: Object.keys(ActivityEntry.shape),
  filters: {
    id: idFilter(activityLog.id, "id", "Entry id"),
    user: idFilter(activityLog.userId, "user", "Acting user's id"),
    username: { describe: "Acting user's name (any case)", build: (v) => inArray(sql`lower(${activityLog.username})`, v.map((s) => s.toLowerCase())) },
    action: { describe: "Exact action, e.g. device.update", build: (v) => inArray(activityLog.action, v) },
    subject_type: { describe: "Kind of record changed, e.g. device, user, role, tag", example: "device", build: (v) => inArray(activityLog.subjectType, v) },
    subject_id: idFilter(activityLog.subjectId, "subject_id", "Id of the record changed (pair with filter[subject_type])"),
    device: {
      describe: "Device id: entries about that device",
      example: "1",
      build: (v) => and(eq(activityLog.subjectType, "device"), inArray(activityLog.subjectId, wholeNumbers("filter[device]", v)))!,
    },
    created_after: { describe: "ISO-8601 time: entries at or after it (one value)", build: (v) => gte(activityLog.createdAt, instantValue("created_after", v)) },
    created_before: { describe: "ISO-8601 time: entries strictly before it (one value)", build: (v) => lt(activityLog.createdAt, instantValue("created_before", v)) },
  },
  sorts: { id: activityLog.id, created_at: activityLog.createdAt },
  defaultSort: "-id",
  idColumn: activityLog.id,
  search: {
    describe: "Substring of the action, username or token name",
    build: (term) => or(containsText(activityLog.action, term), containsText(activityLog.username, term), containsText(activityLog.tokenName, term))!,
  },
};

/**
 * Entries about devices outside the caller's scope are hidden like the devices themselves (their old and new
 * values would otherwise leak); so are those about deleted devices, whose scope can no longer be told.
 */
export function visibleEntries(scope: DeviceScope): SQL | undefined {
  const inScope = deviceScopeCondition(scope);
  if (!inScope) return undefined;
  return or(ne(activityLog.subjectType, "device"), inArray(activityLog.subjectId, sql`(select ${devices.id} from ${devices} where ${inScope})`));
}

const serialize = (r: ActivityRow): ActivityOut => ({
  id: r.id, user_id: r.userId, username: r.username, token_name: r.tokenName, ip: r.ip, action: r.action,
  subject_type: r.subjectType, subject_id: r.subjectId, changes: r.changes ?? {}, created_at: r.createdAt.toISOString(),
});

export async function listActivity(db: DbOrTx, scope: DeviceScope, q: ListQuery): Promise<{ total: number; rows: ActivityOut[] }> {
  const where = and(q.where, visibleEntries(scope));
  const [rows, [total]] = await Promise.all([
    db.select().from(activityLog).where(where).orderBy(...q.orderBy).limit(q.perPage).offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(activityLog).where(where),
  ]);
  return { total: total?.n ?? 0, rows: rows.map(serialize) };
}

export async function getActivity(db: DbOrTx, scope: DeviceScope, id: number): Promise<ActivityOut> {
  const [row] = await db.select().from(activityLog).where(and(eq(activityLog.id, id), visibleEntries(scope)));
  if (!row) throw ApiError.notFound(`Activity log entry ${id}`);
  return serialize(row);
}
