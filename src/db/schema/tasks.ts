import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";
import { devices } from "./devices.ts";
import { jobs } from "./jobs.ts";
import { snippets } from "./snippets.ts";
import { scanPresets } from "./discovery.ts";

/**
 * What a task does; src/modules/tasks/types.ts says what each one targets and
 * which job it queues.
 */
export const TASK_TYPES = [
  "download_devices",
  "download_categories",
  "download_tags",
  "download_all",
  "purge_configs",
  "compliance",
  "snippet",
  "backup_database",
  "discovery_scan",
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** How a scheduled snippet deploy runs, as the deploy endpoint's body says it. */
export type SnippetTaskOptions = {
  dynamic_vars?: Record<string, string>;
  canary?: number;
  stop_on_failure?: boolean;
  concurrency?: number;
  confirm_device_count?: number;
};

/** How a run came about: its cron slot, a late start for slots missed while no scheduler ran, or a person. */
export const TASK_RUN_TRIGGERS = ["schedule", "catch_up", "manual"] as const;
export type TaskRunTrigger = (typeof TASK_RUN_TRIGGERS)[number];

export const tasks = sqliteTable(
  "tasks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    type: text("type", { enum: TASK_TYPES }).notNull(),
    /** Targets by id; which list counts depends on the type. Ids of records deleted since are ignored. */
    deviceIds: text("device_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    categoryIds: text("category_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    tagIds: text("tag_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    /** Five-field cron expression, read in `timezone` (an IANA name). */
    cron: text("cron").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    paused: integer("paused", { mode: "boolean" }).notNull().default(false),
    notifyOnFailure: integer("notify_on_failure", { mode: "boolean" }).notNull().default(false),
    /**
     * Only cron slots after this instant are due. Moved on create, resume and schedule change, so a task never
     * "catches up" on time it was paused or had another schedule.
     */
    scheduleFrom: timestamp("schedule_from").notNull(),
    /** A `snippet` task's snippet; null for other types (and once the snippet is deleted: its runs then push nothing). */
    snippetId: integer("snippet_id").references(() => snippets.id, { onDelete: "set null" }),
    /** A `snippet` task's deploy settings: dynamic_vars, canary, stop_on_failure, concurrency, confirm_device_count. */
    snippetOptions: text("snippet_options", { mode: "json" }).$type<SnippetTaskOptions>(),
    /** A `discovery_scan` task's scan preset (src/modules/discovery/); null for other types. */
    scanPresetId: integer("scan_preset_id").references(() => scanPresets.id, { onDelete: "set null" }),
    /** Set for the tasks netkeep seeds ("nightly_backup", "retention_purge"): they can be edited and paused, not deleted. */
    systemKey: text("system_key"),
    ...timestamps,
  },
  (t) => [uniqueIndex("tasks_name_key_unique").on(t.nameKey), uniqueIndex("tasks_system_key_unique").on(t.systemKey)],
);

/**
 * One execution of a task. Scheduled runs are unique per (task, slot): of several schedulers racing for a
 * slot, only the one whose insert lands queues the run's jobs. Manual runs have no slot (NULLs never clash).
 * Outcomes are not stored here: they are read from the jobs the run's items point at.
 */
export const taskRuns = sqliteTable(
  "task_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    taskId: integer("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    /** The task's type when it ran (the task may change later). */
    taskType: text("task_type", { enum: TASK_TYPES }).notNull(),
    trigger: text("trigger", { enum: TASK_RUN_TRIGGERS }).notNull(),
    scheduledFor: timestamp("scheduled_for"),
    /** For a catch_up run: how many slots passed without a run (this run stands for all of them). */
    missedSlots: integer("missed_slots").notNull().default(0),
    requestedBy: integer("requested_by"),
    startedAt: timestamp("started_at").notNull(),
    /** Set when the last of its jobs finishes (src/platform/jobs/queue.ts), or at once when it has none. */
    finishedAt: timestamp("finished_at"),
    /**
     * Item counts by status over every item, written when the run finishes (they no longer change): listing
     * runs counted each run's items on every request, a 100,000-device run's per page of runs (bench:estate).
     */
    counts: text("counts", { mode: "json" }).$type<Record<string, number>>(),
  },
  (t) => [
    uniqueIndex("task_runs_slot_unique").on(t.taskId, t.scheduledFor),
    index("task_runs_started_idx").on(t.startedAt),
    index("task_runs_open_idx").on(t.finishedAt),
  ],
);

/**
 * What a run covered: one row per target device (or one device-less row for a system task), with the job that
 * does the work, or why there is none. A job already queued for a device when the run starts is shared.
 */
export const taskRunItems = sqliteTable(
  "task_run_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id")
      .notNull()
      .references(() => taskRuns.id, { onDelete: "cascade" }),
    deviceId: integer("device_id").references(() => devices.id, { onDelete: "set null" }),
    /** The device's name when the run started, kept after the device is deleted. */
    deviceName: text("device_name"),
    jobId: integer("job_id").references(() => jobs.id, { onDelete: "set null" }),
    /** Why no job was queued ("disabled"); null when the item has a job. */
    skipReason: text("skip_reason"),
  },
  (t) => [
    index("task_run_items_run_idx").on(t.runId),
    index("task_run_items_job_idx").on(t.jobId),
    index("task_run_items_device_idx").on(t.deviceId),
  ],
);
