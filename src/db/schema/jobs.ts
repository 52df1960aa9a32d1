import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { devices } from "./devices.ts";

/**
 * Kinds of work a collector runs. A snippet_push job pushes one device's lines of a snippet deployment (its
 * `params.deployment_device_id`). A purge_configs job (the retention purge task)
 * has no device; a compliance job has one (a task's check of that device) or none (a run of a policy or an
 * assignment over every device it covers, named in `params`). An event job hands one event to one consumer
 * (`params`: event_id, consumer, and the consumer's target, e.g. a webhook subscription id; src/modules/events/).
 * A detect job recognises its device's family (POST /devices/{id}/detect; `params.apply` sets what it found).
 * A discover job (no device) scans `params.addresses` on `params.ports` (src/modules/discovery/).
 */
export const JOB_TYPES = [
  "download",
  "purge_configs",
  "compliance",
  "snippet_push",
  "backup_database",
  "event",
  "detect",
  "discover",
] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATES = ["queued", "running", "finished"] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * How a finished job ended; what users filter on and what decides a retry. `output_invalid`: the configuration
 * command printed nothing or no plausible configuration (the template's min_bytes, config_marker).
 */
export const JOB_OUTCOMES = [
  "success",
  "unchanged",
  "auth_failed",
  "unreachable",
  "timeout",
  "host_key_changed",
  "prompt_not_found",
  "output_invalid",
  "error",
  "cancelled",
] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/**
 * `snippet`: the before and after downloads of a snippet push (their versions say so in change_trigger); `event`: an
 * event job the dispatcher queued; `syslog`: a device's "configuration changed" message (collector/syslog/), its
 * `params.changed_by` saying who changed it.
 */
export const JOB_TRIGGERS = ["download_now", "schedule", "api", "cli", "snippet", "event", "syslog"] as const;
export type JobTrigger = (typeof JOB_TRIGGERS)[number];

/**
 * The work queue collectors share through the database. A collector claims a job with one atomic UPDATE and
 * holds a lease it keeps extending; a lease that runs out puts the job back in the queue.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    type: text("type", { enum: JOB_TYPES }).notNull(),
    deviceId: integer("device_id").references(() => devices.id, { onDelete: "cascade" }),
    /** Higher runs first: download-now jumps the scheduled queue. */
    priority: integer("priority").notNull().default(0),
    state: text("state", { enum: JOB_STATES }).notNull().default("queued"),
    outcome: text("outcome", { enum: JOB_OUTCOMES }),
    trigger: text("trigger", { enum: JOB_TRIGGERS }).notNull(),
    /** What the job is asked to do beyond its type and device (a compliance run's policy_id or assignment_id). */
    params: text("params", { mode: "json" }).$type<Record<string, unknown>>(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(3),
    runAfter: timestamp("run_after").notNull(),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamp("lease_expires_at"),
    /** What the outcome means for a person: the error, or "unchanged, verified by SNMP". */
    message: text("message"),
    /** Facts of the run: duration_ms, bytes, config ids, the last lines seen when a prompt was not found. */
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    requestedBy: integer("requested_by"),
    createdAt: timestamp("created_at").notNull(),
    startedAt: timestamp("started_at"),
    finishedAt: timestamp("finished_at"),
  },
  (t) => [
    // In claimNextJob's order, so a claim reads queued jobs from the front and stops at the first runnable one;
    // ordered by (state, priority, run_after) SQLite sorted every queued job on each claim: O(n^2) over a queue.
    index("jobs_claim_order_idx").on(t.state, sql`${t.priority} desc`, t.id),
    index("jobs_device_idx").on(t.deviceId, t.state),
    // The metrics' trailing-hour figures (src/platform/metrics/database.ts) read only the jobs finished in the window;
    // the backup reports read what they count of those jobs from the index alone, not each job's row (its result).
    index("jobs_finished_at_idx").on(t.finishedAt, t.type, t.state, t.outcome, t.deviceId),
  ],
);
