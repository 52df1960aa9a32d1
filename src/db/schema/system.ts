import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/** `syslog`: a collector's syslog receiver (collector/syslog/), its state and counters in `details`. */
export const HEARTBEAT_KINDS = ["collector", "scheduler", "syslog"] as const;
export type HeartbeatKind = (typeof HEARTBEAT_KINDS)[number];

/**
 * What each collector (and the scheduler each one runs) says about itself, every few seconds: the health checks
 * read how fresh it is, the system information lists it. One row per process and kind, keyed by the owner name
 * the collector also puts in its leases; a collector that stops cleanly removes its rows.
 */
export const processHeartbeats = sqliteTable(
  "process_heartbeats",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    kind: text("kind", { enum: HEARTBEAT_KINDS }).notNull(),
    /** host:pid:suffix, as in the collector's leases. */
    owner: text("owner").notNull(),
    host: text("host").notNull(),
    pid: integer("pid").notNull(),
    version: text("version").notNull(),
    concurrency: integer("concurrency").notNull(),
    startedAt: timestamp("started_at").notNull(),
    seenAt: timestamp("seen_at").notNull(),
    /** What the process reports beyond being alive (a syslog receiver: state, port, counters); null for the others. */
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [uniqueIndex("process_heartbeats_owner_kind_idx").on(t.owner, t.kind)],
);

export const HEALTH_STATUSES = ["ok", "warning", "failed"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export type StoredCheck = {
  name: string;
  status: HealthStatus;
  message: string;
  value: number | null;
  unit: string | null;
};

/** Each pass of the health checks (every 5 minutes, and on demand), so health-latest answers without running them. */
export const healthRuns = sqliteTable(
  "health_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The worst of the checks' statuses. */
    status: text("status", { enum: HEALTH_STATUSES }).notNull(),
    trigger: text("trigger", { enum: ["schedule", "api"] }).notNull(),
    checks: text("checks", { mode: "json" }).$type<StoredCheck[]>().notNull(),
    ranAt: timestamp("ran_at").notNull(),
  },
  (t) => [index("health_runs_ran_at_idx").on(t.ranAt)],
);
