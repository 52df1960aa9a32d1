import { sql } from "drizzle-orm";
import { Gauge, type Registry } from "prom-client";
import type { Clock } from "../../kernel/clock.ts";
import type { Db } from "../../db/client.ts";
import { DELIVERY_OUTCOMES } from "../../db/schema/index.ts";
import { HEARTBEAT_STALE_MS } from "../jobs/heartbeats.ts";
import { remoteCollectorStates, remoteZonesWithoutCollector } from "../jobs/remote-collectors.ts";

/** Finished backups, their durations and webhook deliveries are counted over this trailing window (gauges, not counters: see docs/observability.md). */
export const WINDOW_MS = 3_600_000;
export const BACKUP_DURATION_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];

const SYSLOG_OUTCOMES = [
  "received",
  "matched",
  "ignored",
  "unknown_source",
  "malformed",
  "rate_limited",
  "queue_full",
  "backups_queued",
] as const;

/** Jobs that hold a device session while they run. */
const SESSION_JOB_TYPES = sql`('download', 'snippet_push')`;

/**
 * Figures read from the database at scrape time: what every collector did and holds, whichever host it runs on,
 * so Prometheus needs one target (any API process) rather than one per collector, and collectors on-premises need
 * no inbound port. Each is one indexed query (jobs by state, finished jobs by finished_at). Labels are bounded
 * sets: job type and state, outcome, vendor name; never a device.
 */
export function registerDatabaseMetrics(registry: Registry, deps: { db: Db; clock: Clock }): void {
  const { db, clock } = deps;
  const registers = [registry];

  new Gauge({
    name: "netkeep_jobs",
    help: "Jobs queued or running now, by type",
    labelNames: ["state", "type"] as const,
    registers,
    async collect() {
      const rows = await db.all<{ state: string; type: string; n: number }>(
        sql`select state, type, count(*) as n from jobs where state in ('queued', 'running') group by state, type`,
      );
      this.reset();
      for (const state of ["queued", "running"]) this.set({ state, type: "download" }, 0);
      for (const r of rows) this.set({ state: r.state, type: r.type }, r.n);
    },
  });

  new Gauge({
    name: "netkeep_oldest_queued_job_age_seconds",
    help: "How long the longest-waiting runnable queued job has waited (0 when none waits)",
    registers,
    async collect() {
      const now = clock.now().getTime();
      const [row] = await db.all<{ since: number | null }>(
        sql`select min(run_after) as since from jobs where state = 'queued' and run_after <= ${now}`,
      );
      this.set(row?.since == null ? 0 : Math.max(0, (now - row.since) / 1000));
    },
  });

  new Gauge({
    name: "netkeep_collector_sessions_open",
    help: "Device sessions the collectors hold now (running downloads and snippet pushes with a live lease)",
    registers,
    async collect() {
      const [row] = await db.all<{ n: number }>(
        sql`select count(*) as n from jobs where state = 'running' and type in ${SESSION_JOB_TYPES} and lease_expires_at > ${clock.now().getTime()}`,
      );
      this.set(row?.n ?? 0);
    },
  });

  new Gauge({
    name: "netkeep_syslog_receivers_listening",
    help: "Collectors whose syslog receiver listens now (docs/syslog.md)",
    registers,
    async collect() {
      const rows = await db.all<{ details: string | null }>(
        sql`select details from process_heartbeats where kind = 'syslog' and seen_at >= ${clock.now().getTime() - HEARTBEAT_STALE_MS}`,
      );
      this.set(
        rows.filter((r) => r.details && (JSON.parse(r.details) as { state?: string }).state === "listening").length,
      );
    },
  });

  new Gauge({
    name: "netkeep_syslog_messages",
    labelNames: ["outcome"] as const,
    registers,
    help: "Syslog messages the listening receivers handled since each started, by outcome: received (all), matched (a configuration change), ignored (a device's other messages), unknown_source, malformed, rate_limited, queue_full; and backups_queued",
    async collect() {
      const rows = await db.all<{ details: string | null }>(
        sql`select details from process_heartbeats where kind = 'syslog' and seen_at >= ${clock.now().getTime() - HEARTBEAT_STALE_MS}`,
      );
      this.reset();
      for (const outcome of SYSLOG_OUTCOMES) this.set({ outcome }, 0);
      for (const r of rows) {
        const counters =
          (r.details ? (JSON.parse(r.details) as { counters?: Record<string, number> }).counters : undefined) ?? {};
        for (const outcome of SYSLOG_OUTCOMES) this.inc({ outcome }, counters[outcome] ?? 0);
      }
    },
  });

  new Gauge({
    name: "netkeep_collectors_alive",
    help: "Collector processes that sent a heartbeat recently",
    registers,
    async collect() {
      const [row] = await db.all<{ n: number }>(
        sql`select count(*) as n from process_heartbeats where kind = 'collector' and seen_at >= ${clock.now().getTime() - HEARTBEAT_STALE_MS}`,
      );
      this.set(row?.n ?? 0);
    },
  });

  // Remote collectors (docs/zones.md), one series each: what their last heartbeat said.
  const remote = async () => remoteCollectorStates(db, clock.now());
  new Gauge({
    name: "netkeep_remote_collector_up",
    help: "1 while a remote collector heartbeats (and is not revoked), else 0",
    labelNames: ["zone", "collector"],
    registers,
    async collect() {
      this.reset();
      for (const c of await remote()) this.set({ zone: c.zone_name, collector: c.name }, c.alive ? 1 : 0);
    },
  });
  new Gauge({
    name: "netkeep_remote_collector_last_heartbeat_seconds",
    help: "When a remote collector last heartbeated, as a Unix time",
    labelNames: ["zone", "collector"],
    registers,
    async collect() {
      this.reset();
      for (const c of await remote())
        if (c.last_heartbeat_at)
          this.set({ zone: c.zone_name, collector: c.name }, Date.parse(c.last_heartbeat_at) / 1000);
    },
  });
  new Gauge({
    name: "netkeep_remote_collector_sessions",
    help: "Device sessions a remote collector ran at its last heartbeat",
    labelNames: ["zone", "collector"],
    registers,
    async collect() {
      this.reset();
      for (const c of await remote()) this.set({ zone: c.zone_name, collector: c.name }, c.sessions);
    },
  });
  new Gauge({
    name: "netkeep_remote_collector_spool_bytes",
    help: "Results waiting in a remote collector's spool for the server, in bytes",
    labelNames: ["zone", "collector"],
    registers,
    async collect() {
      this.reset();
      for (const c of await remote()) this.set({ zone: c.zone_name, collector: c.name }, c.spool_bytes);
    },
  });
  new Gauge({
    name: "netkeep_remote_zones_without_collector",
    help: "Remote zones no live collector serves: their jobs wait",
    registers,
    async collect() {
      this.set((await remoteZonesWithoutCollector(db, clock.now())).length);
    },
  });

  new Gauge({
    name: "netkeep_config_versions",
    help: "Configuration versions stored (distinct versions of every device's commands)",
    registers,
    async collect() {
      const [row] = await db.all<{ n: number }>(sql`select count(*) as n from configs`);
      this.set(row?.n ?? 0);
    },
  });

  new Gauge({
    name: "netkeep_database_size_bytes",
    help: "Pages in use times page size, as the database reports it",
    registers,
    async collect() {
      const [row] = await db.all<{ size: number }>(
        sql`select page_count * page_size as size from pragma_page_count(), pragma_page_size()`,
      );
      this.set(row?.size ?? 0);
    },
  });

  new Gauge({
    name: "netkeep_backups_last_hour",
    help: "Backups (download jobs) finished in the last hour, by outcome and device vendor",
    labelNames: ["outcome", "vendor"] as const,
    registers,
    async collect() {
      const rows = await db.all<{ outcome: string | null; vendor: string | null; n: number }>(sql`
        select j.outcome as outcome, v.name as vendor, count(*) as n from jobs j
        left join devices d on d.id = j.device_id left join vendors v on v.id = d.vendor_id
        where j.finished_at >= ${clock.now().getTime() - WINDOW_MS} and j.type = 'download'
        group by j.outcome, v.name`);
      this.reset();
      for (const r of rows) this.set({ outcome: r.outcome ?? "unknown", vendor: r.vendor ?? "none" }, r.n);
    },
  });

  new Gauge({
    name: "netkeep_webhook_deliveries_last_hour",
    help: "Webhook delivery attempts in the last hour, by outcome (delivered, retrying, failed, gone, refused)",
    labelNames: ["outcome"] as const,
    registers,
    async collect() {
      // webhook_deliveries keeps the newest few hundred attempts per subscription, so this reads a bounded table.
      const rows = await db.all<{ outcome: string; n: number }>(
        sql`select outcome, count(*) as n from webhook_deliveries where created_at >= ${clock.now().getTime() - WINDOW_MS} group by outcome`,
      );
      this.reset();
      for (const outcome of DELIVERY_OUTCOMES) this.set({ outcome }, 0);
      for (const r of rows) this.set({ outcome: r.outcome }, r.n);
    },
  });

  registry.registerMetric(backupDurationHistogram(db, clock) as never);
}

/**
 * A histogram built from the database rather than from observations: the successful downloads finished in the
 * last hour, counted into buckets by one query. prom-client's Histogram only takes observations, so this is a
 * metric object in the shape its registry renders (name, help, type, values with their series names).
 */
function backupDurationHistogram(db: Db, clock: Clock) {
  const name = "netkeep_backup_duration_seconds_last_hour";
  const help =
    "Duration of the successful backups (success or unchanged) finished in the last hour, start of the session to stored";
  const buckets = BACKUP_DURATION_BUCKETS.map((le, i) =>
    sql.raw(`sum(case when d <= ${le * 1000} then 1 else 0 end) as b${i}`),
  );
  return {
    name,
    help,
    type: "histogram",
    aggregator: "sum",
    async get() {
      const [row] = await db.all<Record<string, number | null>>(sql`
        select count(*) as n, coalesce(sum(d), 0) as total, ${sql.join(buckets, sql`, `)}
        from (select finished_at - started_at as d from jobs
              where finished_at >= ${clock.now().getTime() - WINDOW_MS} and type = 'download'
                and outcome in ('success', 'unchanged') and started_at is not null)`);
      const values = BACKUP_DURATION_BUCKETS.map((le, i) => ({
        metricName: `${name}_bucket`,
        labels: { le },
        value: row?.[`b${i}`] ?? 0,
      }));
      values.push({ metricName: `${name}_bucket`, labels: { le: "+Inf" as unknown as number }, value: row?.n ?? 0 });
      return {
        name,
        help,
        type: "histogram",
        aggregator: "sum",
        values: [
          ...values,
          { metricName: `${name}_sum`, labels: {}, value: (row?.total ?? 0) / 1000 },
          { metricName: `${name}_count`, labels: {}, value: row?.n ?? 0 },
        ],
      };
    },
  };
}
