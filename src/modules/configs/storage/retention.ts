/**
 * Configuration retention: the policy (keep versions for N days and/or the newest N per device and command) and
 * the purge that applies it. A dry run and a real run compute the same plan; the real run then deletes it in one
 * transaction: the versions, their change rows (by cascade; a kept version's change keeps its diff as text when
 * the version before it goes), blobs no version refers to any more (re-encoding texts that were deltas against
 * them; the system-wide purge also takes texts that deleted devices left behind), their search
 * index documents, and failed download records older than the age limit. The system-wide purge (the nightly
 * task, `svc configs:purge`) then runs storage maintenance (maintenance.ts), outside that transaction.
 */
import { and, eq, inArray, lt, notInArray, sql, type SQL } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import {
  configBlobs,
  configChanges,
  configRetentionPolicy,
  configSearchDocs,
  configs,
  devices,
  jobs,
  taskRunItems,
} from "../../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../../platform/auth/scope.ts";
import { recordActivity, type Actor } from "../../../platform/audit/record.ts";
import { deleteBlobs } from "./blobs.ts";
import { maintainConfigStorage, type MaintenanceProgress, type MaintenanceReport } from "./maintenance.ts";
import { trimSeriesIndex } from "../search/search-reindex.ts";
import { keepDiffsOfSuccessors } from "../history/change-diffs.ts";
import { failureReason } from "../../../kernel/error-reason.ts";

export type RetentionPolicy = { keepDays: number | null; keepVersions: number | null; updatedAt: Date | null };

const POLICY_ID = 1;
const DAY_MS = 86_400_000;
/** Ids per statement: well under SQLite's limit on bound parameters. */
const CHUNK = 500;

export async function getRetentionPolicy(db: DbOrTx): Promise<RetentionPolicy> {
  const [row] = await db.select().from(configRetentionPolicy).where(eq(configRetentionPolicy.id, POLICY_ID));
  return {
    keepDays: row?.keepDays ?? null,
    keepVersions: row?.keepVersions ?? null,
    updatedAt: row?.updatedAt ?? null,
  };
}

export async function setRetentionPolicy(
  db: DbOrTx,
  policy: { keepDays: number | null; keepVersions: number | null },
  now: Date,
): Promise<RetentionPolicy> {
  const values = { keepDays: policy.keepDays, keepVersions: policy.keepVersions, updatedAt: now };
  await db
    .insert(configRetentionPolicy)
    .values({ id: POLICY_ID, ...values })
    .onConflictDoUpdate({ target: configRetentionPolicy.id, set: values });
  return values;
}

export const serializePolicy = (p: RetentionPolicy) => ({
  keep_days: p.keepDays,
  keep_versions: p.keepVersions,
  updated_at: p.updatedAt ? p.updatedAt.toISOString() : null,
});

export type PurgedConfig = {
  id: number;
  deviceId: number;
  deviceName: string;
  command: string;
  version: number;
  lastSeenAt: Date;
};

export type PurgeReport = {
  dryRun: boolean;
  policy: RetentionPolicy;
  /** Versions last seen before this are old enough to go (null: no age limit). */
  cutoff: Date | null;
  configs: PurgedConfig[];
  changes: number;
  blobs: number;
  /** Stored (compressed) bytes of the blobs that go (texts re-encoded because of them may grow a little). */
  blobBytes: number;
  failedJobIds: number[];
  /** What storage maintenance did, after a system-wide real run. */
  maintenance?: MaintenanceReport;
  /** Why that maintenance failed: the purge itself was committed before it started. */
  maintenanceError?: string;
};

const chunks = <T>(items: T[]) =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

/** Texts no version refers to: a deleted device's versions go by cascade and leave theirs behind. */
const orphanBlobs = (db: DbOrTx) =>
  db
    .select({ hash: configBlobs.hash, bytes: sql<number>`length(${configBlobs.content})` })
    .from(configBlobs)
    .where(sql`not exists (select 1 from ${configs} where ${configs.blobHash} = ${configBlobs.hash})`);

/**
 * What the policy removes now, within a device scope (everything for the system's own purge, which also collects
 * the texts deleted devices left behind, with a policy or without).
 */
async function planPurge(db: DbOrTx, policy: RetentionPolicy, now: Date, scope: DeviceScope) {
  const cutoff = policy.keepDays === null ? null : new Date(now.getTime() - policy.keepDays * DAY_MS);
  const inScope = deviceScopeCondition(scope) ?? sql`1`;
  if (policy.keepDays === null && policy.keepVersions === null) {
    return { cutoff, doomed: [], changes: 0, blobs: scope.all ? await orphanBlobs(db) : [], failedJobIds: [] };
  }

  // Newest first within each series: rank 1 is the latest version, which no rule removes.
  const ranked = sql`(select ${configs.id} as id, ${configs.deviceId} as device_id, ${configs.command} as command, ${configs.version} as version,
      ${configs.lastSeenAt} as last_seen_at, row_number() over (partition by ${configs.deviceId}, ${configs.command} order by ${configs.version} desc) as rank
    from ${configs})`;
  const rules: SQL[] = [sql`r.rank > 1`];
  if (policy.keepVersions !== null) rules.push(sql`r.rank > ${policy.keepVersions}`);
  if (cutoff) rules.push(sql`r.last_seen_at < ${cutoff.getTime()}`);
  const rows = await db.all<{
    id: number;
    device_id: number;
    name: string;
    command: string;
    version: number;
    last_seen_at: number;
  }>(sql`
    select r.id, r.device_id, ${devices.name} as name, r.command, r.version, r.last_seen_at
    from ${ranked} r join ${devices} on ${devices.id} = r.device_id
    where ${sql.join(rules, sql` and `)} and ${inScope}
    order by r.device_id, r.command, r.version`);
  const doomed: PurgedConfig[] = rows.map((r) => ({
    id: Number(r.id),
    deviceId: Number(r.device_id),
    deviceName: r.name,
    command: r.command,
    version: Number(r.version),
    lastSeenAt: new Date(Number(r.last_seen_at)),
  }));
  const ids = doomed.map((c) => c.id);
  const doomedSet = new Set(ids);

  let changes = 0;
  const hashes = new Set<string>();
  for (const part of chunks(ids)) {
    const [n] = await db
      .select({ n: sql<number>`count(*)` })
      .from(configChanges)
      .where(inArray(configChanges.configId, part));
    changes += Number(n?.n ?? 0);
    for (const r of await db.selectDistinct({ hash: configs.blobHash }).from(configs).where(inArray(configs.id, part)))
      hashes.add(r.hash);
  }
  // A blob goes only when no version outside the plan refers to it (texts are shared by hash).
  const blobs: { hash: string; bytes: number }[] = [];
  for (const part of chunks([...hashes])) {
    const referrers = await db
      .select({ id: configs.id, hash: configs.blobHash })
      .from(configs)
      .where(inArray(configs.blobHash, part));
    const kept = new Set(referrers.filter((u) => !doomedSet.has(u.id)).map((u) => u.hash));
    const free = part.filter((h) => !kept.has(h));
    if (free.length) {
      blobs.push(
        ...(await db
          .select({ hash: configBlobs.hash, bytes: sql<number>`length(${configBlobs.content})` })
          .from(configBlobs)
          .where(inArray(configBlobs.hash, free))),
      );
    }
  }

  // One push per orphan: a purge after deleting many devices can free more texts than a spread's arguments hold.
  if (scope.all) for (const orphan of await orphanBlobs(db)) blobs.push(orphan);

  const failedJobIds = cutoff
    ? (
        await db
          .select({ id: jobs.id })
          .from(jobs)
          .leftJoin(devices, eq(devices.id, jobs.deviceId))
          .where(
            and(
              eq(jobs.type, "download"),
              eq(jobs.state, "finished"),
              notInArray(jobs.outcome, ["success", "unchanged"]),
              lt(jobs.finishedAt, cutoff),
              // A task run's counts and status are read from its jobs: those stay while the run does.
              sql`not exists (select 1 from ${taskRunItems} where ${taskRunItems.jobId} = ${jobs.id})`,
              scope.all ? undefined : deviceScopeCondition(scope),
            ),
          )
          .orderBy(jobs.id)
      ).map((j) => j.id)
    : [];
  return { cutoff, doomed, changes, blobs, failedJobIds };
}

/**
 * Applies the retention policy (or, with dryRun, only says what it would remove). The system's scheduled purge
 * calls it with no scope; an API caller's purge stays inside the caller's device scope.
 */
export async function purgeConfigs(
  db: Db,
  now: Date,
  options: { dryRun: boolean; actor?: Actor; scope?: DeviceScope; progress?: MaintenanceProgress },
): Promise<PurgeReport> {
  const scope = options.scope ?? { all: true };
  const run = async (tx: DbOrTx): Promise<PurgeReport> => {
    const policy = await getRetentionPolicy(tx);
    const plan = await planPurge(tx, policy, now, scope);
    const report: PurgeReport = {
      dryRun: options.dryRun,
      policy,
      cutoff: plan.cutoff,
      configs: plan.doomed,
      changes: plan.changes,
      blobs: plan.blobs.length,
      blobBytes: plan.blobs.reduce((n, b) => n + Number(b.bytes), 0),
      failedJobIds: plan.failedJobIds,
    };
    if (options.dryRun) return report;
    await keepDiffsOfSuccessors(
      tx,
      plan.doomed.map((c) => c.id),
    );
    for (const part of chunks(plan.doomed.map((c) => c.id))) await tx.delete(configs).where(inArray(configs.id, part));
    await deleteBlobs(
      tx,
      plan.blobs.map((b) => b.hash),
    );
    const series = new Map(plan.doomed.map((c) => [`${c.deviceId}\u0000${c.command}`, c]));
    for (const c of series.values()) await trimSeriesIndex(tx, c.deviceId, c.command);
    // Documents of series whose every version was deleted some other way.
    await tx.run(
      sql`delete from ${configSearchDocs} where not exists (select 1 from ${configs} c where c.device_id = ${configSearchDocs.deviceId} and c.command = ${configSearchDocs.command})`,
    );
    for (const part of chunks(plan.failedJobIds)) await tx.delete(jobs).where(inArray(jobs.id, part));

    if (!report.configs.length && !report.failedJobIds.length) return report;
    await recordActivity(
      tx,
      options.actor ?? { system: "retention" },
      {
        action: "configs.purge",
        subjectType: "config",
        subjectId: null,
        after: purgeSummary(report),
        // A purge over every device is about all of them; a scoped caller's purge only about the devices it touched.
        reach: scope.all ? { all: true } : { devices: [...new Set(plan.doomed.map((c) => c.deviceId))] },
      },
      now,
    );
    return report;
  };
  if (options.dryRun) return run(db);
  const report = await db.transaction(run);
  // An API caller's purge (always scoped, even an admin's) answers without waiting for maintenance.
  if (options.scope === undefined) {
    try {
      report.maintenance = await maintainConfigStorage(db, { now, progress: options.progress });
    } catch (err) {
      report.maintenanceError = failureReason(err);
    }
  }
  return report;
}

/** What a purge did, as the activity log and the purge task's job record it. */
export const purgeSummary = (report: PurgeReport) => ({
  keep_days: report.policy.keepDays,
  keep_versions: report.policy.keepVersions,
  configs_deleted: report.configs.length,
  changes_deleted: report.changes,
  blobs_deleted: report.blobs,
  bytes_freed: report.blobBytes,
  failed_jobs_deleted: report.failedJobIds.length,
});
