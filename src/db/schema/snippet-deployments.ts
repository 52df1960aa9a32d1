import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";
import { devices } from "./devices.ts";
import { jobs } from "./jobs.ts";
import { snippets } from "./snippets.ts";
import { taskRuns } from "./tasks.ts";

/* Deployments point at snippets and task runs; tasks point at snippets: in a file of their own, no cycle. */

export const DEPLOYMENT_STATES = ["running", "finished"] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

/**
 * One send or deploy: the snippet as it was rendered, what it was asked to reach and with which guard rails.
 * A send is a deployment of one device.
 */
export const snippetDeployments = sqliteTable("snippet_deployments", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  /** Null once the snippet is deleted: the deployment keeps its own copy of the lines per device. */
  snippetId: integer("snippet_id").references(() => snippets.id, { onDelete: "set null" }),
  snippetName: text("snippet_name").notNull(),
  kind: text("kind", { enum: ["send", "deploy", "task"] }).notNull(),
  /** For a deployment a `snippet` task started: its run, whose items get each push's job as it is queued. */
  taskRunId: integer("task_run_id").references(() => taskRuns.id, { onDelete: "set null" }),
  state: text("state", { enum: DEPLOYMENT_STATES }).notNull().default("running"),
  /** Devices pushed first; the rest are queued only when all of them succeeded. 0: no canary. */
  canary: integer("canary").notNull().default(0),
  stopOnFailure: integer("stop_on_failure", { mode: "boolean" }).notNull().default(false),
  /** Pushes of this deployment running at once. */
  concurrency: integer("concurrency").notNull(),
  /** Why the deployment stopped before reaching every device (a canary failed, stop_on_failure), else null. */
  stoppedReason: text("stopped_reason"),
  requestedBy: integer("requested_by"),
  createdAt: timestamp("created_at").notNull(),
  finishedAt: timestamp("finished_at"),
});

export const DEPLOYMENT_DEVICE_STATUSES = ["pending", "queued", "success", "failed", "error", "skipped"] as const;
export type DeploymentDeviceStatus = (typeof DEPLOYMENT_DEVICE_STATUSES)[number];

/** One device of a deployment: the exact lines it gets, its push job, and how the push went. */
export const snippetDeploymentDevices = sqliteTable(
  "snippet_deployment_devices",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    deploymentId: integer("deployment_id")
      .notNull()
      .references(() => snippetDeployments.id, { onDelete: "cascade" }),
    deviceId: integer("device_id").references(() => devices.id, { onDelete: "set null" }),
    deviceName: text("device_name").notNull(),
    /** Order of pushing: canary devices first. */
    position: integer("position").notNull(),
    lines: text("lines", { mode: "json" }).$type<string[]>().notNull(),
    rollbackLines: text("rollback_lines", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    status: text("status", { enum: DEPLOYMENT_DEVICE_STATUSES }).notNull().default("pending"),
    jobId: integer("job_id").references(() => jobs.id, { onDelete: "set null" }),
    message: text("message"),
    /** The push's facts: failed line, saved, rolled back, before/after config ids, diff, lines not found after. */
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    /** What was sent and what came back, secrets masked. */
    transcript: text("transcript"),
    finishedAt: timestamp("finished_at"),
  },
  (t) => [
    index("snippet_deployment_devices_deployment_idx").on(t.deploymentId, t.position),
    index("snippet_deployment_devices_job_idx").on(t.jobId),
  ],
);
