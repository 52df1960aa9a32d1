import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import { deviceIdInScope, deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { categories, configChanges, devices, deviceTags, jobs, tags, vendors } from "../../db/schema/index.ts";
import type { Report } from "./answer.ts";
import type { DayRange } from "./range.ts";

export const DEVICE_GROUPS = ["vendor", "model", "os_version", "category", "tag", "status"] as const;
export type DeviceGroup = (typeof DEVICE_GROUPS)[number];

/** How many devices (in the scope) share each vendor, model, OS version, category, tag or status; "" for none. */
export async function deviceStatistics(
  db: DbOrTx,
  scope: DeviceScope,
  groupBy: DeviceGroup,
): Promise<Report<{ group_by: string; value: string; devices: number }>> {
  const inScope = deviceScopeCondition(scope);
  let rows: { value: string | null; n: number }[];
  if (groupBy === "os_version") {
    // Devices keep no OS version of their own: it is what SNMP last read (sysDescr) before a download, kept in that
    // job's result. A device never read over SNMP counts under "".
    // Spelled out with the table names: drizzle leaves them off columns of a one-table select, which would make the
    // subquery compare jobs.device_id with jobs.id.
    const version = sql<string | null>`(select json_extract(j.result, '$.snmp.software_version') from jobs j
      where j.device_id = "devices"."id" and j.type = 'download' and json_extract(j.result, '$.snmp.software_version') is not null
      order by j.id desc limit 1)`;
    const perDevice = await db.select({ value: version }).from(devices).where(inScope);
    const counts = new Map<string | null, number>();
    for (const { value } of perDevice) counts.set(value, (counts.get(value) ?? 0) + 1);
    rows = [...counts].map(([value, n]) => ({ value, n }));
  } else if (groupBy === "tag") {
    rows = await db
      .select({ value: tags.name, n: count() })
      .from(deviceTags)
      .innerJoin(tags, eq(tags.id, deviceTags.tagId))
      .innerJoin(devices, eq(devices.id, deviceTags.deviceId))
      .where(inScope)
      .groupBy(tags.id);
  } else {
    const key: SQL<string | null> = {
      vendor: sql<string | null>`${vendors.name}`,
      model: sql<string | null>`${devices.model}`,
      category: sql<string | null>`${categories.name}`,
      status: sql<string | null>`${devices.status}`,
    }[groupBy];
    rows = await db
      .select({ value: key, n: count() })
      .from(devices)
      .leftJoin(vendors, eq(vendors.id, devices.vendorId))
      .leftJoin(categories, eq(categories.id, devices.categoryId))
      .where(inScope)
      .groupBy(key);
  }
  return {
    columns: ["group_by", "value", "devices"],
    rows: rows
      .map((r) => ({ group_by: groupBy, value: r.value ?? "", devices: r.n }))
      .sort((a, b) => b.devices - a.devices || a.value.localeCompare(b.value)),
  };
}

/** Download outcomes that mean the device was backed up. */
const BACKED_UP = ["success", "unchanged"] as const;

/**
 * Download jobs that finished in the range; cancelled ones were never attempted. The state is tested as `+state`
 * so SQLite searches the range on jobs_finished_at_idx: offered an equality on the claim order's state, it took
 * that instead and read every finished job ever run.
 */
const downloadsIn = (range: DayRange) =>
  and(
    eq(jobs.type, "download"),
    sql`+${jobs.state} = 'finished'`,
    sql`${jobs.outcome} <> 'cancelled'`,
    gte(jobs.finishedAt, new Date(range.from)),
    lt(jobs.finishedAt, new Date(range.end)),
  );

/**
 * Per device in the scope: finished download attempts in the range (read from jobs_finished_at_idx alone:
 * reports-plan.test.ts), how many backed it up, and the share.
 * Cancelled jobs were never attempted and do not count.
 */
export const backupAttemptsQuery = (db: DbOrTx, scope: DeviceScope, range: DayRange) =>
  db
    .select({
      deviceId: jobs.deviceId,
      attempts: count(),
      succeeded: sql<number>`sum(case when ${inArray(jobs.outcome, [...BACKED_UP])} then 1 else 0 end)`,
    })
    .from(jobs)
    .where(and(downloadsIn(range), deviceIdInScope(jobs.deviceId, scope)))
    .groupBy(jobs.deviceId);

export async function backupSuccess(db: DbOrTx, scope: DeviceScope, range: DayRange) {
  const attempts = await backupAttemptsQuery(db, scope, range);
  const byDevice = new Map(attempts.map((a) => [a.deviceId, a]));
  const list = await db
    .select({ id: devices.id, name: devices.name })
    .from(devices)
    .where(deviceScopeCondition(scope))
    .orderBy(asc(devices.name));
  const report: Report<{
    device_id: number;
    device_name: string;
    attempts: number;
    succeeded: number;
    failed: number;
    success_percent: number | null;
  }> = {
    columns: ["device_id", "device_name", "attempts", "succeeded", "failed", "success_percent"],
    rows: list.map((d) => {
      const a = byDevice.get(d.id);
      const total = a?.attempts ?? 0;
      const ok = Number(a?.succeeded ?? 0);
      return {
        device_id: d.id,
        device_name: d.name,
        attempts: total,
        succeeded: ok,
        failed: total - ok,
        success_percent: total ? Math.round((ok / total) * 1000) / 10 : null,
      };
    }),
  };
  return report;
}

export const CHANGE_GROUPS = ["device", "vendor", "tag"] as const;
export type ChangeGroup = (typeof CHANGE_GROUPS)[number];

const dayOf = sql<string>`strftime('%Y-%m-%d', ${configChanges.createdAt} / 1000, 'unixepoch')`;

/** New configuration versions per UTC day and device, vendor or tag (a device with two tags counts under both). */
export async function changeHistory(db: DbOrTx, scope: DeviceScope, range: DayRange, groupBy: ChangeGroup) {
  const where = and(
    gte(configChanges.createdAt, new Date(range.from)),
    lt(configChanges.createdAt, new Date(range.end)),
    deviceScopeCondition(scope),
  );
  const key = {
    device: sql<string>`${devices.name}`,
    vendor: sql<string>`coalesce(${vendors.name}, '')`,
    tag: sql<string>`${tags.name}`,
  }[groupBy];
  let q = db
    .select({ day: dayOf, value: key, n: count() })
    .from(configChanges)
    .innerJoin(devices, eq(devices.id, configChanges.deviceId))
    .leftJoin(vendors, eq(vendors.id, devices.vendorId))
    .$dynamic();
  if (groupBy === "tag")
    q = q.innerJoin(deviceTags, eq(deviceTags.deviceId, devices.id)).innerJoin(tags, eq(tags.id, deviceTags.tagId));
  const rows = await q.where(where).groupBy(dayOf, key).orderBy(asc(dayOf), asc(key));
  const report: Report<{ date: string; group_by: string; value: string; changes: number }> = {
    columns: ["date", "group_by", "value", "changes"],
    rows: rows.map((r) => ({ date: r.day, group_by: groupBy, value: r.value, changes: r.n })),
  };
  return report;
}

/**
 * Each device's changes in the range, from config_changes_created_idx alone; devices are joined to the grouped
 * rows, not to every change (reports-plan.test.ts).
 */
export const changesPerDeviceQuery = (db: DbOrTx, scope: DeviceScope, range: DayRange) =>
  db
    .select({
      deviceId: configChanges.deviceId,
      n: count().as("n"),
      last: sql<number>`max(${configChanges.createdAt})`.as("last"),
    })
    .from(configChanges)
    .where(
      and(
        gte(configChanges.createdAt, new Date(range.from)),
        lt(configChanges.createdAt, new Date(range.end)),
        deviceIdInScope(configChanges.deviceId, scope),
      ),
    )
    .groupBy(configChanges.deviceId);

/** The devices with the most new configuration versions in the range, most first. */
export async function topChangers(db: DbOrTx, scope: DeviceScope, range: DayRange, limit: number) {
  const perDevice = changesPerDeviceQuery(db, scope, range).as("per_device");
  const rows = await db
    .select({ id: devices.id, name: devices.name, n: perDevice.n, last: perDevice.last })
    .from(perDevice)
    .innerJoin(devices, eq(devices.id, perDevice.deviceId))
    .orderBy(desc(perDevice.n), asc(devices.name))
    .limit(limit);
  const report: Report<{ device_id: number; device_name: string; changes: number; last_change_at: string }> = {
    columns: ["device_id", "device_name", "changes", "last_change_at"],
    rows: rows.map((r) => ({
      device_id: r.id,
      device_name: r.name,
      changes: r.n,
      last_change_at: new Date(Number(r.last)).toISOString(),
    })),
  };
  return report;
}

/** New configuration versions per UTC day in the scope: the whole fleet's total, one grouped pass over the range. */
export async function changesPerDay(
  db: DbOrTx,
  scope: DeviceScope,
  range: DayRange,
): Promise<{ date: string; changes: number }[]> {
  const rows = await db
    .select({ day: dayOf, n: count() })
    .from(configChanges)
    .where(
      and(
        gte(configChanges.createdAt, new Date(range.from)),
        lt(configChanges.createdAt, new Date(range.end)),
        deviceIdInScope(configChanges.deviceId, scope),
      ),
    )
    .groupBy(dayOf)
    .orderBy(asc(dayOf));
  return rows.map((r) => ({ date: r.day, changes: r.n }));
}

/**
 * The backup success report in brief, as the reports page shows it: the fleet's totals over the devices with an
 * attempt in the range, and the `worst` devices that failed, lowest share first (then by name). The same numbers
 * as `backupSuccess`, without a row for each of the scope's devices.
 */
export async function backupSummary(db: DbOrTx, scope: DeviceScope, range: DayRange, worst: number) {
  const perDevice = db
    .select({
      deviceId: sql<number>`${devices.id}`.as("device_id"),
      name: sql<string>`${devices.name}`.as("device_name"),
      attempts: count().as("attempts"),
      succeeded: sql<number>`sum(case when ${inArray(jobs.outcome, [...BACKED_UP])} then 1 else 0 end)`.as("succeeded"),
    })
    .from(jobs)
    .innerJoin(devices, eq(devices.id, jobs.deviceId))
    .where(and(downloadsIn(range), deviceScopeCondition(scope)))
    .groupBy(devices.id)
    .as("per_device");
  const share = sql<number>`round(${perDevice.succeeded} * 1000.0 / ${perDevice.attempts}) / 10`;
  const [totals, rows] = await Promise.all([
    db
      .select({
        devices: count(),
        attempts: sql<number>`coalesce(sum(${perDevice.attempts}), 0)`,
        succeeded: sql<number>`coalesce(sum(${perDevice.succeeded}), 0)`,
      })
      .from(perDevice),
    db
      .select({
        id: perDevice.deviceId,
        name: perDevice.name,
        attempts: perDevice.attempts,
        succeeded: perDevice.succeeded,
      })
      .from(perDevice)
      .where(sql`${perDevice.succeeded} < ${perDevice.attempts}`)
      .orderBy(asc(share), asc(perDevice.name))
      .limit(worst),
  ]);
  const t = totals[0]!;
  return {
    devices: t.devices,
    attempts: Number(t.attempts),
    succeeded: Number(t.succeeded),
    worst: rows.map((r) => ({
      device_id: r.id,
      device_name: r.name,
      attempts: r.attempts,
      succeeded: Number(r.succeeded),
      failed: r.attempts - Number(r.succeeded),
      success_percent: Math.round((Number(r.succeeded) / r.attempts) * 1000) / 10,
    })),
  };
}
