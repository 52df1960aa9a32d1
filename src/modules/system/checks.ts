import { and, asc, count, desc, eq, gte, isNotNull, lt, lte } from "drizzle-orm";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { Clock } from "../../kernel/clock.ts";
import type { Config } from "../../kernel/config.ts";
import type { Db } from "../../db/client.ts";
import {
  configSearchPending,
  credentials,
  healthRuns,
  jobs,
  processHeartbeats,
  webhooks,
  type HealthStatus,
  type StoredCheck,
} from "../../db/schema/index.ts";
import { DISK_FULL_REASON, failureReason, isDiskFull } from "../../kernel/error-reason.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { plural } from "../../kernel/words.ts";
import { HEARTBEAT_STALE_MS, heartbeatsOf } from "../../platform/jobs/heartbeats.ts";
import { nodeFs, promised } from "./node-fs.ts";
import { getSyslogSettings } from "../../platform/settings/service.ts";
import { remoteZonesWithoutCollector } from "../../platform/jobs/remote-collectors.ts";

export type HealthDeps = { db: Db; clock: Clock; config: Config; secrets: SecretBox };
export type Check = StoredCheck;

const RANK: Record<HealthStatus, number> = { ok: 0, warning: 1, failed: 2 };
export const worstOf = (checks: readonly { status: HealthStatus }[]): HealthStatus =>
  checks.reduce<HealthStatus>((worst, c) => (RANK[c.status] > RANK[worst] ? c.status : worst), "ok");

const check = (
  name: string,
  status: HealthStatus,
  message: string,
  value: number | null = null,
  unit: string | null = null,
): Check => ({ name, status, message, value, unit });
const seconds = (ms: number) => Math.round(ms / 1000);
const ago = (ms: number) =>
  ms < 120_000
    ? `${seconds(ms)} s`
    : ms < 2 * 3_600_000
      ? `${Math.round(ms / 60_000)} min`
      : `${Math.round(ms / 3_600_000)} h`;

/** Health runs and heartbeats older than this are removed by each pass (the write the database check times). */
const KEEP_RUNS_MS = 7 * 24 * 3_600_000;
const FORGET_AFTER_MS = 24 * 3_600_000;

/** Thresholds, in one place so docs/system-health.md can name them. */
export const THRESHOLDS = {
  writeLatencyMs: { warning: 500, failed: 5_000 },
  queuedAgeMs: { warning: 15 * 60_000, failed: 60 * 60_000 },
  freeDiskPercent: { warning: 10, failed: 3 },
  searchBacklog: { warning: 1_000, failed: 20_000 },
  backupFailureShare: { warning: 0.1, failed: 0.5 },
} as const;

const level = (value: number, t: { warning: number; failed: number }): HealthStatus =>
  value >= t.failed ? "failed" : value >= t.warning ? "warning" : "ok";

async function database(deps: HealthDeps): Promise<Check> {
  const started = performance.now();
  try {
    const cutoff = new Date(deps.clock.now().getTime() - KEEP_RUNS_MS);
    await deps.db.batch([
      deps.db.delete(healthRuns).where(lt(healthRuns.ranAt, cutoff)),
      // Collectors that died without a clean stop leave rows; after a week nobody needs them.
      deps.db.delete(processHeartbeats).where(lt(processHeartbeats.seenAt, cutoff)),
    ]);
  } catch (err) {
    if (isDiskFull(err)) return check("database", "failed", `The database refused a write: ${DISK_FULL_REASON}`);
    return check(
      "database",
      "failed",
      `The database refused a write: ${failureReason(err)}. Check the disk, its permissions, and DATABASE_URL`,
    );
  }
  const ms = Math.round(performance.now() - started);
  const status = level(ms, THRESHOLDS.writeLatencyMs);
  return check(
    "database",
    status,
    status === "ok"
      ? `Reachable; a write took ${ms} ms`
      : `A write took ${ms} ms: another process holds the write lock for long, or the disk is slow; see the collectors' logs and the disk`,
    ms,
    "ms",
  );
}

async function collectors(deps: HealthDeps): Promise<Check> {
  const now = deps.clock.now().getTime();
  // A collector silent for a day was removed, not stopped: it no longer counts (stop cleanly to drop it at once).
  const rows = (await heartbeatsOf(deps.db, "collector")).filter((r) => now - r.seenAt.getTime() <= FORGET_AFTER_MS);
  const stale = rows.filter((r) => now - r.seenAt.getTime() > HEARTBEAT_STALE_MS);
  const fresh = rows.length - stale.length;
  if (!rows.length)
    return check(
      "collectors",
      "failed",
      "No collector has reported: nothing downloads configurations. Start one (npm start starts one unless COLLECTOR=off; or npm run collector)",
      0,
    );
  const silent = stale.map((r) => `${r.owner} (last heard ${ago(now - r.seenAt.getTime())} ago)`).join(", ");
  if (!fresh)
    return check(
      "collectors",
      "failed",
      `No collector is running: ${silent}. Restart it and read its log for why it stopped`,
      0,
    );
  if (stale.length)
    return check(
      "collectors",
      "warning",
      `${plural(fresh, "collector")} running, but ${silent} stopped reporting: restart it, or ignore it if it was removed (its row goes after 24 h)`,
      fresh,
    );
  return check("collectors", "ok", `${plural(fresh, "collector")} running`, fresh);
}

/**
 * Each remote zone needs a live site collector of its own: the collectors beside the API never take its jobs,
 * which wait (they do not fail) until one heartbeats.
 */
async function remoteZones(deps: HealthDeps): Promise<Check> {
  const orphaned = await remoteZonesWithoutCollector(deps.db, deps.clock.now());
  if (!orphaned.length) return check("remote_zones", "ok", "Every remote zone has a live collector", 0);
  return check(
    "remote_zones",
    "warning",
    `No live collector in ${orphaned.map((z) => `zone '${z.name}' (${z.id})`).join(", ")}: its jobs wait in the queue. Start or enroll a site collector there (docs/zones.md)`,
    orphaned.length,
  );
}

async function scheduler(deps: HealthDeps): Promise<Check> {
  const now = deps.clock.now().getTime();
  const rows = await heartbeatsOf(deps.db, "scheduler");
  const newest = Math.max(...rows.map((r) => r.seenAt.getTime()), -Infinity);
  if (!rows.length)
    return check(
      "scheduler",
      "failed",
      "The scheduler has never reported: scheduled tasks do not run. It runs inside every collector: start one",
      null,
    );
  const silence = now - newest;
  if (silence > HEARTBEAT_STALE_MS)
    return check(
      "scheduler",
      "failed",
      `The scheduler was last heard ${ago(silence)} ago: scheduled tasks do not start. Restart the collector that runs it`,
      seconds(silence),
      "s",
    );
  return check("scheduler", "ok", `Last heard ${ago(silence)} ago`, seconds(silence), "s");
}

async function queue(deps: HealthDeps): Promise<Check> {
  const now = deps.clock.now();
  const runnable = and(eq(jobs.state, "queued"), lte(jobs.runAfter, now));
  const [depth] = await deps.db.select({ n: count() }).from(jobs).where(runnable);
  const [oldest] = await deps.db
    .select({ runAfter: jobs.runAfter })
    .from(jobs)
    .where(runnable)
    .orderBy(asc(jobs.runAfter))
    .limit(1);
  const age = oldest ? now.getTime() - oldest.runAfter.getTime() : 0;
  const status = level(age, THRESHOLDS.queuedAgeMs);
  if (status === "ok")
    return check("queue", "ok", `${plural(depth!.n, "job")} waiting; the oldest for ${ago(age)}`, seconds(age), "s");
  return check(
    "queue",
    status,
    `${plural(depth!.n, "job")} waiting; the oldest for ${ago(age)}: the collectors cannot keep up or none runs. Start more collectors or raise COLLECTOR_CONCURRENCY`,
    seconds(age),
    "s",
  );
}

async function disk(deps: HealthDeps): Promise<Check> {
  const dir = deps.config.storageDir;
  const fs = nodeFs;
  if (!fs?.statfs)
    return check("disk", "warning", "This runtime cannot tell free disk space; watch STORAGE_DIR's disk another way");
  try {
    const stats = await promised<{ bavail: number; blocks: number; bsize: number }>((cb) => fs.statfs(dir, cb));
    const free = stats.bavail * stats.bsize;
    const percent = Math.round((stats.bavail / Math.max(1, stats.blocks)) * 1000) / 10;
    const status: HealthStatus =
      percent <= THRESHOLDS.freeDiskPercent.failed
        ? "failed"
        : percent <= THRESHOLDS.freeDiskPercent.warning
          ? "warning"
          : "ok";
    const gib = (free / 2 ** 30).toFixed(1);
    return check(
      "disk",
      status,
      status === "ok"
        ? `${gib} GiB (${percent}%) free in ${dir}`
        : `Only ${gib} GiB (${percent}%) free in ${dir}: free space, move STORAGE_DIR to a larger disk, or shorten configuration retention`,
      percent,
      "%",
    );
  } catch (err) {
    return check(
      "disk",
      "failed",
      `STORAGE_DIR ${dir} cannot be read: ${failureReason(err)}; create it or fix its permissions`,
    );
  }
}

async function searchBacklog(deps: HealthDeps): Promise<Check> {
  const [row] = await deps.db.select({ n: count() }).from(configSearchPending);
  const n = row!.n;
  const status = level(n, THRESHOLDS.searchBacklog);
  return check(
    "search_index",
    status,
    status === "ok"
      ? `${plural(n, "version")} waiting to be indexed`
      : `${plural(n, "version")} waiting to be indexed: search still finds them, slower. Collectors index when idle; give them idle time or run more`,
    n,
  );
}

async function backups(deps: HealthDeps): Promise<Check> {
  const since = new Date(deps.clock.now().getTime() - 24 * 3_600_000);
  const rows = await deps.db
    .select({ outcome: jobs.outcome, n: count() })
    .from(jobs)
    .where(
      and(
        eq(jobs.type, "download"),
        eq(jobs.state, "finished"),
        isNotNull(jobs.finishedAt),
        gte(jobs.finishedAt, since),
      ),
    )
    .groupBy(jobs.outcome);
  const total = rows.filter((r) => r.outcome !== "cancelled").reduce((a, r) => a + r.n, 0);
  const failed = rows
    .filter((r) => r.outcome !== "success" && r.outcome !== "unchanged" && r.outcome !== "cancelled")
    .reduce((a, r) => a + r.n, 0);
  if (!total) return check("backups", "ok", "No backups finished in the last 24 h", 0, "%");
  const share = failed / total;
  const percent = Math.round(share * 1000) / 10;
  const status = level(share, THRESHOLDS.backupFailureShare);
  return check(
    "backups",
    status,
    status === "ok"
      ? `${failed} of ${total} backups failed in the last 24 h (${percent}%)`
      : `${failed} of ${total} backups failed in the last 24 h (${percent}%): see GET /api/v1/dashboard/errored-devices (or the jobs list) for the reasons`,
    percent,
    "%",
  );
}

async function appKey(deps: HealthDeps): Promise<Check> {
  try {
    const probe = "netkeep health probe";
    if ((await deps.secrets.decrypt(await deps.secrets.encrypt(probe))) !== probe)
      throw new Error("a round trip changed the text");
  } catch (err) {
    return check(
      "app_key",
      "failed",
      `The app key cannot encrypt: ${failureReason(err)}. Check APP_KEY or STORAGE_DIR/app.key`,
    );
  }
  const [stored] = await deps.db
    .select({ id: credentials.id, sealed: credentials.passwordEnc })
    .from(credentials)
    .where(isNotNull(credentials.passwordEnc))
    .orderBy(desc(credentials.id))
    .limit(1);
  if (!stored) return check("app_key", "ok", "Present; no stored secret to test it against yet");
  try {
    await deps.secrets.decrypt(stored.sealed!);
  } catch {
    return check(
      "app_key",
      "failed",
      `The app key cannot decrypt credential ${stored.id}: it is not the key the credentials were saved with. Restore the original APP_KEY (or storage/app.key); re-entering every secret is the other way`,
    );
  }
  return check("app_key", "ok", "Present, and decrypts the stored credentials");
}

/** Webhook subscriptions the service disabled (410 Gone, or failing after every retry) until someone looks. */
async function webhookSubscriptions(deps: HealthDeps): Promise<Check> {
  const disabled = await deps.db
    .select({ id: webhooks.id, reason: webhooks.disabledReason })
    .from(webhooks)
    .where(and(eq(webhooks.enabled, false), isNotNull(webhooks.disabledReason)))
    .orderBy(asc(webhooks.id));
  if (!disabled.length) return check("webhooks", "ok", "No webhook subscription was disabled for failing", 0);
  // By id, never by URL: every role with system.read reads health, scoped ones too, and a URL is often the receiver's credential.
  const named = disabled
    .slice(0, 5)
    .map((w) => `webhook ${w.id} (${w.reason})`)
    .join("; ");
  return check(
    "webhooks",
    "warning",
    `${plural(disabled.length, "webhook subscription")} disabled for failing: ${named}. Fix the receiver, then enable it again (PATCH /api/v1/webhooks/{id} {"enabled": true})`,
    disabled.length,
  );
}

/**
 * The syslog receiver (collector/syslog/, docs/syslog.md), when the settings turn it on: some collector must be
 * listening on its port. Its figures (messages matched, dropped and why) count every source, hence FLEET_FIGURES.
 */
async function syslogReceiver(deps: HealthDeps): Promise<Check> {
  const settings = await getSyslogSettings(deps.db);
  if (!settings.enabled)
    return check("syslog", "ok", "Off (settings syslog.enabled): configuration changes are backed up on schedule only");
  const now = deps.clock.now().getTime();
  const rows = (await heartbeatsOf(deps.db, "syslog")).filter((r) => now - r.seenAt.getTime() <= HEARTBEAT_STALE_MS);
  const states = rows.map(
    (r) => (r.details ?? {}) as { state?: string; port?: number; error?: string; counters?: Record<string, number> },
  );
  const listening = states.filter((s) => s.state === "listening");
  if (!listening.length) {
    const why = states.find((s) => s.error)?.error;
    return check(
      "syslog",
      "failed",
      why
        ? `No collector receives syslog: ${why}. Free the port or choose another (PATCH /api/v1/settings {"syslog": {"port": ...}})`
        : "No collector receives syslog: start a collector (it listens within 10 s of the setting)",
      0,
    );
  }
  const sum = (key: string) => listening.reduce((n, s) => n + (s.counters?.[key] ?? 0), 0);
  const dropped = sum("malformed") + sum("unknown_source") + sum("rate_limited") + sum("queue_full");
  return check(
    "syslog",
    "ok",
    `Listening on port ${settings.port}: ${plural(sum("received"), "message")} received, ${plural(sum("matched"), "configuration change")}, ${dropped} dropped (${sum("unknown_source")} from addresses of no device, ${sum("malformed")} malformed, ${sum("rate_limited")} over the rate, ${sum("queue_full")} with the queue full)`,
    sum("received"),
  );
}

/** Each check by the name it answers with, in the order they are listed. */
const CHECKS: [string, (deps: HealthDeps) => Promise<Check>][] = [
  ["database", database],
  ["collectors", collectors],
  ["remote_zones", remoteZones],
  ["scheduler", scheduler],
  ["queue", queue],
  ["disk", disk],
  ["search_index", searchBacklog],
  ["backups", backups],
  ["app_key", appKey],
  ["webhooks", webhookSubscriptions],
  ["syslog", syslogReceiver],
];

/** The checks' names, in the order a health run lists them. */
export const CHECK_NAMES: readonly string[] = CHECKS.map(([name]) => name);

export type HealthRun = { id: number; status: HealthStatus; trigger: "schedule" | "api"; checks: Check[]; ranAt: Date };

/** Runs every check (one failing to run is itself a failed check) and stores the pass. */
export async function runHealthChecks(deps: HealthDeps, trigger: HealthRun["trigger"]): Promise<HealthRun> {
  const checks = await Promise.all(
    CHECKS.map(async ([name, run]) => {
      try {
        return await run(deps);
      } catch (err) {
        return check(name, "failed", `The check could not run: ${failureReason(err)}`);
      }
    }),
  );
  const ranAt = deps.clock.now();
  const status = worstOf(checks);
  try {
    const [row] = await deps.db
      .insert(healthRuns)
      .values({ status, trigger, checks, ranAt })
      .returning({ id: healthRuns.id });
    return { id: row!.id, status, trigger, checks, ranAt };
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    // The disk has room by statfs (a size limit, or space taken meanwhile) but the database cannot grow: the
    // disk check says so, and the answer carries the pass, which cannot be stored.
    const full = checks.map((c) =>
      c.name === "disk" ? check("disk", "failed", `The database cannot grow: ${DISK_FULL_REASON}`, c.value, c.unit) : c,
    );
    const failing = full
      .filter((c) => c.status !== "ok")
      .map((c) => `${c.name} ${c.status}: ${c.message}`)
      .join("; ");
    throw new ApiError(507, `The health pass could not be stored, as the disk is full. Its checks not ok: ${failing}`);
  }
}

/** Newer than this, a stored pass answers health-latest; older (the schedule stopped), a new pass runs. */
export const LATEST_MAX_AGE_MS = 10 * 60_000;

export async function latestHealth(deps: HealthDeps): Promise<HealthRun> {
  const [row] = await deps.db.select().from(healthRuns).orderBy(desc(healthRuns.ranAt), desc(healthRuns.id)).limit(1);
  if (row && deps.clock.now().getTime() - row.ranAt.getTime() <= LATEST_MAX_AGE_MS) return row;
  return runHealthChecks(deps, "schedule");
}

/** Checks whose figures count the whole fleet's records: jobs, stored versions, backups, webhook subscriptions. */
const FLEET_FIGURES = new Set(["queue", "search_index", "backups", "webhooks", "syslog"]);
const STATUS_WORDS: Record<HealthStatus, string> = { ok: "OK", warning: "Needs attention", failed: "Failing" };

/**
 * The pass as a caller with this scope may see it. A role that sees only some devices gets each check's status,
 * but not the figures and messages of the checks that count the whole fleet ("12 of 2,000 backups failed" tells
 * of devices outside its scope; /metrics refuses such a token outright).
 */
export function healthFor(run: HealthRun, scope: DeviceScope): HealthRun {
  if (scope.all) return run;
  return {
    ...run,
    checks: run.checks.map((c) =>
      FLEET_FIGURES.has(c.name)
        ? {
            ...c,
            value: null,
            unit: null,
            message: `${STATUS_WORDS[c.status]}. This check counts every device and your role sees only some: its figures are for a role that sees all devices`,
          }
        : c,
    ),
  };
}

export const serializeHealth = (run: HealthRun) => ({
  id: run.id,
  status: run.status,
  trigger: run.trigger,
  ran_at: run.ranAt.toISOString(),
  checks: run.checks,
});
