import { and, asc, count, desc, eq, gte, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { configChanges, configs, devices, jobs, tasks } from "../../db/schema/index.ts";
import { type DeviceScope, deviceIdInScope, deviceScopeCondition } from "../../platform/auth/scope.ts";
import { complianceTrends } from "../compliance/index.ts";
import { deviceStateCounts } from "../devices/index.ts";
import { latestRuns, type Links } from "../tasks/index.ts";
import { visibleTasks } from "../tasks/index.ts";

const DAY = 24 * 3_600_000;

/** Devices by state: disabled; never backed up; failing (the last download failed); up (the rest). */
export async function deviceCounts(db: DbOrTx, scope: DeviceScope) {
  const c = await deviceStateCounts(db, scope);
  const failing = c.enabledBackedUpFailing;
  return {
    total: c.total,
    up: c.total - c.disabled - c.enabledNeverBackedUp - failing,
    failing,
    disabled: c.disabled,
    never_backed_up: c.enabledNeverBackedUp,
  };
}

/**
 * Enabled devices whose last download failed, newest failure first, with the reason: read from devices_failing_idx
 * (the devices failing now, by their failure's end), each joined to its job, so a fleet that mostly backs up reads
 * a few rows (dashboard-plan.test.ts). The index's condition is written out as a literal for SQLite to use it.
 */
export const erroredDevicesQuery = (db: DbOrTx, scope: DeviceScope, limit: number) =>
  db
    .select({
      id: devices.id,
      name: devices.name,
      ip: devices.ip,
      jobId: jobs.id,
      outcome: jobs.outcome,
      message: jobs.message,
      failedAt: jobs.finishedAt,
      lastBackupAt: devices.lastBackupAt,
    })
    .from(devices)
    .innerJoin(jobs, eq(jobs.id, devices.lastDownloadJobId))
    .where(
      and(
        sql`${devices.enabled} = 1 and ${devices.lastDownloadOutcome} not in ('success', 'unchanged')`,
        deviceScopeCondition(scope),
      ),
    )
    .orderBy(desc(devices.lastDownloadAt), desc(devices.lastDownloadJobId))
    .limit(limit);

export async function erroredDevices(db: DbOrTx, scope: DeviceScope, limit: number) {
  const rows = await erroredDevicesQuery(db, scope, limit);
  return rows.map((r) => ({
    device_id: r.id,
    device_name: r.name,
    device_ip: r.ip,
    job_id: r.jobId,
    outcome: r.outcome!,
    reason: r.message ?? r.outcome!,
    failed_at: r.failedAt!.toISOString(),
    last_backup_at: r.lastBackupAt?.toISOString() ?? null,
  }));
}

/** The devices added last. */
export const latestDevicesQuery = (db: DbOrTx, scope: DeviceScope, limit: number) =>
  db
    .select()
    .from(devices)
    .where(deviceScopeCondition(scope))
    .orderBy(desc(devices.createdAt), desc(devices.id))
    .limit(limit);

export async function latestDevices(db: DbOrTx, scope: DeviceScope, limit: number) {
  const rows = await latestDevicesQuery(db, scope, limit);
  return rows.map((r) => ({
    device_id: r.id,
    device_name: r.name,
    device_ip: r.ip,
    enabled: r.enabled,
    status: r.status,
    created_at: r.createdAt.toISOString(),
    last_backup_at: r.lastBackupAt?.toISOString() ?? null,
  }));
}

/** Each task the caller may see, with its latest run. */
export async function taskStatus(db: DbOrTx, scope: DeviceScope, links: Links) {
  const rows = await db
    .select({ id: tasks.id, name: tasks.name, type: tasks.type, paused: tasks.paused })
    .from(tasks)
    .where(visibleTasks(scope))
    .orderBy(asc(tasks.name));
  const runs = await latestRuns(
    db,
    scope,
    links,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const last = runs.get(r.id);
    return {
      task_id: r.id,
      task_name: r.name,
      task_type: r.type,
      paused: r.paused,
      last_run: last
        ? {
            id: last.id,
            status: last.status,
            trigger: last.trigger,
            scheduled_for: last.scheduled_for,
            started_at: last.started_at,
            finished_at: last.finished_at,
          }
        : null,
    };
  });
}

/** Versions stored and changes recorded lately. */
export async function configInfo(db: DbOrTx, scope: DeviceScope, now: Date) {
  const one = async (q: Promise<{ n: number }[]>) => (await q)[0]!.n;
  const changesSince = (ms: number) =>
    one(
      db
        .select({ n: count() })
        .from(configChanges)
        .where(
          and(
            gte(configChanges.createdAt, new Date(now.getTime() - ms)),
            deviceIdInScope(configChanges.deviceId, scope),
          ),
        ),
    );
  const [versions, devicesWithVersions, changes24h, changes7d] = await Promise.all([
    one(db.select({ n: count() }).from(configs).where(deviceIdInScope(configs.deviceId, scope))),
    // Per device (its first entry in the configs index), not a distinct pass over every version stored.
    one(
      db
        .select({ n: count() })
        .from(devices)
        .where(
          and(sql`exists (select 1 from configs c where c.device_id = "devices"."id")`, deviceScopeCondition(scope)),
        ),
    ),
    changesSince(DAY),
    changesSince(7 * DAY),
  ]);
  return {
    versions_stored: versions,
    devices_with_versions: devicesWithVersions,
    changes_24h: changes24h,
    changes_7d: changes7d,
  };
}

/** Changes per UTC day for the last `days` days (today included), oldest first, days without changes as 0. */
export async function changePulse(db: DbOrTx, scope: DeviceScope, now: Date, days = 30) {
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const from = today - (days - 1) * DAY;
  const rows = await db
    // The day as a literal: a bound number may arrive as a real, and the division would then not truncate.
    .select({
      day: sql<number>`(${configChanges.createdAt} / ${sql.raw(String(DAY))}) * ${sql.raw(String(DAY))}`.as("day"),
      n: count(),
    })
    .from(configChanges)
    .where(and(gte(configChanges.createdAt, new Date(from)), deviceIdInScope(configChanges.deviceId, scope)))
    .groupBy(sql`day`);
  const byDay = new Map(rows.map((r) => [Number(r.day), r.n]));
  return Array.from({ length: days }, (_, i) => {
    const day = from + i * DAY;
    return { date: new Date(day).toISOString().slice(0, 10), changes: byDay.get(day) ?? 0 };
  });
}

/** Jobs waiting and running, by type, and how long the oldest runnable one has waited. */
export async function queueInfo(db: DbOrTx, scope: DeviceScope, now: Date) {
  const visible = scope.all ? undefined : deviceIdInScope(jobs.deviceId, scope);
  const rows = await db
    .select({ type: jobs.type, state: jobs.state, n: count() })
    .from(jobs)
    .where(and(inArray(jobs.state, ["queued", "running"]), visible))
    .groupBy(jobs.type, jobs.state);
  const [oldest] = await db
    .select({ runAfter: jobs.runAfter })
    .from(jobs)
    .where(and(eq(jobs.state, "queued"), sql`${jobs.runAfter} <= ${now.getTime()}`, visible))
    .orderBy(asc(jobs.runAfter))
    .limit(1);
  const sum = (state: string) => rows.filter((r) => r.state === state).reduce((a, r) => a + r.n, 0);
  return {
    queued: sum("queued"),
    running: sum("running"),
    by_type: Object.fromEntries(
      [...new Set(rows.map((r) => r.type))].sort().map((type) => [
        type,
        {
          queued: rows.find((r) => r.type === type && r.state === "queued")?.n ?? 0,
          running: rows.find((r) => r.type === type && r.state === "running")?.n ?? 0,
        },
      ]),
    ),
    oldest_queued_seconds: oldest ? Math.max(0, Math.round((now.getTime() - oldest.runAfter.getTime()) / 1000)) : null,
  };
}

/** The fleet's compliance now: the newest period of the compliance trends (src/modules/compliance/trends.ts). */
export async function complianceSummary(db: DbOrTx, scope: DeviceScope, now: Date) {
  const { periods } = await complianceTrends(db, scope, {}, now);
  const {
    devices: evaluated,
    compliant,
    not_compliant,
    not_evaluated,
    compliant_percent,
    failing_rules,
  } = periods.at(-1)!;
  return {
    devices: evaluated,
    compliant,
    not_compliant,
    not_evaluated,
    compliant_percent,
    failing_rules: failing_rules.slice(0, 10),
  };
}
