/**
 * Configuration retention: the policy (keep versions for N days and/or the newest N per device and command) and
 * the purge that applies it. A dry run and a real run compute the same plan; the real run then deletes it in short
 * transactions (purgeConfigs), each whole: the versions, their change rows (by cascade; a kept version's change
 * keeps its diff as text when the version before it goes), blobs no version refers to any more (re-encoding texts
 * that were deltas against them; the system-wide purge also takes texts that deleted devices left behind), their
 * search index documents; then failed download records older than the age limit. The system-wide purge (the
 * nightly task, `svc configs:purge`) then runs storage maintenance (maintenance.ts).
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
import type { AuthContext } from "../../../platform/http/env.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { deleteBlobs } from "./blobs.ts";
import { maintainConfigStorage, type MaintenanceReport } from "./maintenance.ts";
import type { MaintenanceProgress } from "./maintenance-progress.ts";
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

/**
 * Sets the policy (a rule left null does not limit), recorded as `retention_policy.update`. It applies to every
 * device, so only a caller whose role sees all of them may change it (403).
 */
export async function changeRetentionPolicy(
  db: Db,
  auth: AuthContext,
  policy: { keepDays: number | null; keepVersions: number | null },
  now: Date,
): Promise<RetentionPolicy> {
  if (!auth.scope.all) {
    throw new ApiError(
      403,
      "The retention policy applies to every device; changing it needs a role that sees all devices",
    );
  }
  return db.transaction(async (tx) => {
    const before = serializePolicy(await getRetentionPolicy(tx));
    const after = await setRetentionPolicy(tx, policy, now);
    await recordActivity(
      tx,
      auth,
      {
        action: "retention_policy.update",
        subjectType: "retention_policy",
        subjectId: POLICY_ID,
        before,
        after: serializePolicy(after),
      },
      now,
    );
    return after;
  });
}

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
    const orphans = scope.all ? await orphanBlobs(db) : [];
    return { cutoff, doomed: [], changes: 0, blobs: orphans, orphans: orphans.map((o) => o.hash), failedJobIds: [] };
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
  const orphans: string[] = [];
  if (scope.all)
    for (const orphan of await orphanBlobs(db)) {
      blobs.push(orphan);
      orphans.push(orphan.hash);
    }

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
  return { cutoff, doomed, changes, blobs, orphans, failedJobIds };
}

/** Versions one purge transaction deletes at most (see purgeConfigs). */
export const PURGE_BATCH_VERSIONS = 10;

export type PurgeOptions = {
  dryRun: boolean;
  actor?: Actor;
  scope?: DeviceScope;
  /** Told how far the purge (one line a batch) and the maintenance after it are. */
  progress?: MaintenanceProgress;
  /** Versions a transaction deletes at most (default PURGE_BATCH_VERSIONS). */
  batchVersions?: number;
  /** Awaited after each committed batch, before the next starts (tests drive the purge step by step with it). */
  betweenBatches?: (done: { versions: number; of: number }) => Promise<void> | void;
};

/** Lets the event loop take what waited (requests, their reads and writes) before the next batch. */
const letOthersIn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One batch of a purge, in its caller's transaction: the versions of `ids` that are still there and still have a
 * newer version (another purge, or a device's deletion, may have got there first), their successors' diffs kept
 * as text, then the versions, the texts nothing else refers to (re-encoding their dependents first), and the
 * series' search documents trimmed. Says how many versions it deleted.
 */
type BatchDone = { versions: number; changes: number; blobs: number; blobBytes: number };

async function purgeBatch(tx: DbOrTx, ids: readonly number[]): Promise<BatchDone> {
  const wanted = JSON.stringify(ids);
  const rows = await tx.all<{ id: number; device_id: number; command: string }>(sql`
    select c.id, c.device_id, c.command from ${configs} c
    where c.id in (select value from json_each(${wanted}))
      and exists (select 1 from ${configs} n where n.device_id = c.device_id and n.command = c.command and n.version > c.version)`);
  if (!rows.length) return { versions: 0, changes: 0, blobs: 0, blobBytes: 0 };
  const doomed = rows.map((r) => Number(r.id));
  const doomedJson = JSON.stringify(doomed);
  await keepDiffsOfSuccessors(tx, doomed);
  // Texts only these versions refer to (texts are shared by hash, across series too).
  const [changes] = await tx.all<{ n: number }>(
    sql`select count(*) as n from ${configChanges} where config_id in (select value from json_each(${doomedJson}))`,
  );
  const free = await tx.all<{ hash: string; bytes: number }>(sql`
    select distinct c.blob_hash as hash, (select length(content) from ${configBlobs} b where b.hash = c.blob_hash) as bytes from ${configs} c where c.id in (select value from json_each(${doomedJson}))
      and not exists (select 1 from ${configs} o where o.blob_hash = c.blob_hash and o.id not in (select value from json_each(${doomedJson})))`);
  await tx.run(sql`delete from ${configs} where id in (select value from json_each(${doomedJson}))`);
  await deleteBlobs(
    tx,
    free.map((f) => f.hash),
  );
  const series = new Map(rows.map((r) => [`${r.device_id}\u0000${r.command}`, r]));
  for (const r of series.values()) await trimSeriesIndex(tx, Number(r.device_id), r.command);
  return {
    versions: doomed.length,
    changes: Number(changes?.n ?? 0),
    blobs: free.length,
    blobBytes: free.reduce((n, f) => n + Number(f.bytes ?? 0), 0),
  };
}

/**
 * Applies the retention policy (or, with dryRun, only says what it would remove). The system's scheduled purge
 * calls it with no scope; an API caller's purge stays inside the caller's device scope.
 *
 * A real run deletes in short transactions of at most `batchVersions` versions each, letting the event loop take
 * what waited between them: the API's requests (reads, and writes such as a token's last use, which wait for the
 * write turn a transaction holds) answer during a purge of a year's history instead of after it. Each batch is
 * whole (versions, diffs, texts and their dependents, search documents), so a purge stopped between batches leaves
 * a consistent store with part of the plan done, and running it again plans and deletes the rest.
 */
export async function purgeConfigs(db: Db, now: Date, options: PurgeOptions): Promise<PurgeReport> {
  const scope = options.scope ?? { all: true };
  const policy = await getRetentionPolicy(db);
  const plan = await planPurge(db, policy, now, scope);
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

  const size = Math.max(1, options.batchVersions ?? PURGE_BATCH_VERSIONS);
  const ids = plan.doomed.map((c) => c.id);
  const of = ids.length;
  let told = 0;
  const step = async (versions: number) => {
    // A line each twentieth of the plan: a year's purge is thousands of batches.
    const twentieths = Math.floor((versions * 20) / of);
    if (twentieths > told || versions === of) {
      told = twentieths;
      options.progress?.(`retention purge: deleted ${versions} of ${of} configuration versions`);
    }
    await letOthersIn();
    await options.betweenBatches?.({ versions, of });
  };
  let done = 0;
  const deleted: BatchDone = { versions: 0, changes: 0, blobs: 0, blobBytes: 0 };
  try {
    for (let i = 0; i < ids.length; i += size) {
      const batch = await db.transaction((tx) => purgeBatch(tx, ids.slice(i, i + size)));
      for (const key of ["versions", "changes", "blobs", "blobBytes"] as const) deleted[key] += batch[key];
      done = Math.min(i + size, ids.length);
      await step(done);
    }
    // Texts deleted devices left behind, checked again in each batch's transaction (a new version may share one).
    const orphans = plan.orphans;
    for (let i = 0; i < orphans.length; i += size) {
      const part = JSON.stringify(orphans.slice(i, i + size));
      await db.transaction(async (tx) => {
        const still = await tx.all<{ hash: string }>(sql`
          select b.hash from ${configBlobs} b where b.hash in (select value from json_each(${part}))
            and not exists (select 1 from ${configs} c where c.blob_hash = b.hash)`);
        await deleteBlobs(
          tx,
          still.map((r) => r.hash),
        );
      });
      await letOthersIn();
    }
    // Documents of series whose every version was deleted some other way.
    await db.run(
      sql`delete from ${configSearchDocs} where not exists (select 1 from ${configs} c where c.device_id = ${configSearchDocs.deviceId} and c.command = ${configSearchDocs.command})`,
    );
    for (const part of chunks(plan.failedJobIds)) {
      await db.delete(jobs).where(inArray(jobs.id, part));
      await letOthersIn();
    }
  } catch (err) {
    // What the committed batches deleted is logged all the same; running the purge again does the rest.
    if (deleted.versions) {
      const part = { ...report, ...deleted, configs: plan.doomed.slice(0, done), failedJobIds: [] };
      await logPurge(db, part, options, scope, now);
    }
    throw err;
  }
  if (report.configs.length || report.failedJobIds.length) await logPurge(db, report, options, scope, now);

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

function logPurge(db: Db, report: PurgeReport, options: PurgeOptions, scope: DeviceScope, now: Date) {
  return recordActivity(
    db,
    options.actor ?? { system: "retention" },
    {
      action: "configs.purge",
      subjectType: "config",
      subjectId: null,
      after: purgeSummary(report),
      // A purge over every device is about all of them; a scoped caller's purge only about the devices it touched.
      reach: scope.all ? { all: true } : { devices: [...new Set(report.configs.map((c) => c.deviceId))] },
    },
    now,
  );
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

/** Items a purge answer lists; the totals count them all. */
export const PURGE_LISTED = 1000;

/** A purge as the API answers it: the first PURGE_LISTED versions and failed jobs, with totals. */
export function serializePurge(report: PurgeReport) {
  return {
    dry_run: report.dryRun,
    policy: { keep_days: report.policy.keepDays, keep_versions: report.policy.keepVersions },
    cutoff: report.cutoff ? report.cutoff.toISOString() : null,
    configs_total: report.configs.length,
    configs: report.configs.slice(0, PURGE_LISTED).map((c) => ({
      id: c.id,
      device_id: c.deviceId,
      device_name: c.deviceName,
      command: c.command,
      version: c.version,
      last_seen_at: c.lastSeenAt.toISOString(),
    })),
    changes_total: report.changes,
    blobs_total: report.blobs,
    blob_bytes: report.blobBytes,
    failed_jobs_total: report.failedJobIds.length,
    failed_job_ids: report.failedJobIds.slice(0, PURGE_LISTED),
  };
}
