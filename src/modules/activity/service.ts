import { z } from "@hono/zod-openapi";
import { and, count, eq, gte, inArray, lt, notInArray, or, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { activityLog, devices } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { idFilter, wholeNumbers, instantValue } from "../../platform/http/filters.ts";
import { REACH_KEY } from "../../platform/audit/record.ts";

export const ActivityEntry = z
  .object({
    id: z.number().int(),
    user_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The acting user; null for the system, or kept after the user was deleted" }),
    username: z.string().nullable().openapi({
      description: "The acting user's name at the time (kept after the user is deleted), or the system task",
    }),
    token_name: z.string().nullable(),
    ip: z.string().nullable(),
    action: z.string().openapi({ example: "device.update" }),
    subject_type: z.string().openapi({ example: "device" }),
    subject_id: z.number().int().nullable(),
    changes: z.record(z.string(), z.object({ old: z.unknown(), new: z.unknown() })).openapi({
      description: "Changed fields with old and new values; secrets appear only as has_* flags",
      example: { device_ip: { old: "192.0.2.1", new: "192.0.2.2" } },
    }),
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
    username: {
      describe: "Acting user's name (any case)",
      build: (v) =>
        inArray(
          sql`lower(${activityLog.username})`,
          v.map((s) => s.toLowerCase()),
        ),
    },
    action: { describe: "Exact action, e.g. device.update", build: (v) => inArray(activityLog.action, v) },
    subject_type: {
      describe: "Kind of record changed, e.g. device, user, role, tag",
      example: "device",
      build: (v) => inArray(activityLog.subjectType, v),
    },
    subject_id: idFilter(
      activityLog.subjectId,
      "subject_id",
      "Id of the record changed (pair with filter[subject_type])",
    ),
    device: {
      describe: "Device id: entries about that device",
      example: "1",
      build: (v) =>
        and(eq(activityLog.subjectType, "device"), inArray(activityLog.subjectId, wholeNumbers("filter[device]", v)))!,
    },
    created_after: {
      describe: "ISO-8601 time: entries at or after it (one value)",
      build: (v) => gte(activityLog.createdAt, instantValue("created_after", v)),
    },
    created_before: {
      describe: "ISO-8601 time: entries strictly before it (one value)",
      build: (v) => lt(activityLog.createdAt, instantValue("created_before", v)),
    },
  },
  sorts: { id: activityLog.id, created_at: activityLog.createdAt },
  defaultSort: "-id",
  idColumn: activityLog.id,
  search: {
    describe: "Substring of the action, username or token name",
    build: (term) =>
      or(
        containsText(activityLog.action, term),
        containsText(activityLog.username, term),
        containsText(activityLog.tokenName, term),
      )!,
  },
};

/** Subject types whose entries may be about devices other than their subject, so they record their reach. */
const REACHING_SUBJECTS = ["config", "task"];
/**
 * Subject types only roles that see every device may manage, because they carry every device's events: their
 * entries (a webhook's URL, which is often a credential of its receiver, and its filters) are theirs alone too.
 */
const WHOLE_ESTATE_SUBJECTS = ["webhook"];

/**
 * A reader whose role is scoped sees an entry only when every device it is about is in the scope (see Reach in
 * record.ts): an entry about a device outside it, or about a task, run or purge reaching one, is hidden and not
 * counted, like the devices themselves; so are entries about deleted devices, whose scope can no longer be
 * told. Entries about no device (users, roles, tags ...) stay visible, but for WHOLE_ESTATE_SUBJECTS'. An entry without a recorded reach is
 * judged by its subject: a device in the scope, or a kind of record that is about no device (task and config
 * entries written before entries recorded their reach are hidden: what they reached is no longer known).
 */
export function visibleEntries(scope: DeviceScope): SQL | undefined {
  const inScope = deviceScopeCondition(scope);
  if (scope.all || !inScope) return undefined;
  const reach = (part: string) => `$."${REACH_KEY}".new.${part}`;
  const noneOutside = (part: string, allowed: SQL) =>
    sql`not exists (select 1 from json_each(${activityLog.changes}, ${reach(part)}) r where r.value not in ${allowed})`;
  const ids = (list: number[]) => sql`(select value from json_each(${JSON.stringify(list)}))`;
  const recorded = and(
    sql`json_extract(${activityLog.changes}, ${reach("all")}) is null`,
    noneOutside("devices", sql`(select ${devices.id} from ${devices} where ${inScope})`),
    noneOutside("tags", ids(scope.tagIds)),
    noneOutside("categories", ids(scope.categoryIds)),
  );
  const bySubject = or(
    notInArray(activityLog.subjectType, ["device", ...REACHING_SUBJECTS, ...WHOLE_ESTATE_SUBJECTS]),
    and(
      eq(activityLog.subjectType, "device"),
      inArray(activityLog.subjectId, sql`(select ${devices.id} from ${devices} where ${inScope})`),
    ),
  );
  return sql`(case when json_type(${activityLog.changes}, ${`$."${REACH_KEY}"`}) is not null then ${recorded} else ${bySubject} end)`;
}

const serialize = (r: ActivityRow): ActivityOut => ({
  id: r.id,
  user_id: r.userId,
  username: r.username,
  token_name: r.tokenName,
  ip: r.ip,
  action: r.action,
  subject_type: r.subjectType,
  subject_id: r.subjectId,
  changes: Object.fromEntries(Object.entries(r.changes ?? {}).filter(([key]) => key !== REACH_KEY)),
  created_at: r.createdAt.toISOString(),
});

export async function listActivity(
  db: DbOrTx,
  scope: DeviceScope,
  q: ListQuery,
): Promise<{ total: number; rows: ActivityOut[] }> {
  const where = and(q.where, visibleEntries(scope));
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(activityLog)
      .where(where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(activityLog).where(where),
  ]);
  return { total: total?.n ?? 0, rows: rows.map(serialize) };
}

export async function getActivity(db: DbOrTx, scope: DeviceScope, id: number): Promise<ActivityOut> {
  const [row] = await db
    .select()
    .from(activityLog)
    .where(and(eq(activityLog.id, id), visibleEntries(scope)));
  if (!row) throw ApiError.notFound(`Activity log entry ${id}`);
  return serialize(row);
}
