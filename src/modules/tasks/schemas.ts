import { z } from "@hono/zod-openapi";
import { JOB_OUTCOMES, TASK_RUN_TRIGGERS, TASK_TYPES } from "../../db/schema/index.ts";
import { canonicalTimeZone, cronProblem, cronText } from "../../kernel/cron.ts";
import { RCONFIG_COMMANDS, TASK_TYPE_DEFS, TASK_TYPE_NAMES } from "./types.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";
import { SnippetTaskOptionsInput } from "./snippet-runs.ts";

const ids = (what: string) =>
  z
    .array(
      z
        .number({ error: `must hold ${what} ids` })
        .int("must hold whole numbers")
        .positive("must hold positive ids"),
    )
    .max(10_000, "must have at most 10000 items")
    .optional();

const typeList = Object.entries(TASK_TYPE_DEFS)
  .map(([t, d]) => `${t} (${d.describe})`)
  .join("; ");

const CronInput = z
  .union(
    [
      z.string().max(200, "must be at most 200 characters"),
      z
        .array(z.union([z.string().max(50), z.number().int()]), {
          error: "must be a cron expression or an array of its 5 fields",
        })
        .length(5, "must be an array of exactly 5 fields (minute, hour, day-of-month, month, day-of-week)"),
    ],
    { error: "must be a cron expression such as '30 2 * * *' or an array of its 5 fields" },
  )
  .superRefine((value, ctx) => {
    const problem = cronProblem(cronText(value));
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({
    description:
      "Five-field cron expression (minute hour day-of-month month day-of-week), read in `timezone`; also accepted as an array of the 5 fields",
    example: "30 2 * * *",
  });

/** Fields a client writes; rConfig's other task fields are rewritten or dropped by src/adapters/compat/rconfig/tasks.ts. */
export const TaskInput = z
  .object({
    task_name: singleLine(
      z.string().trim().min(1, "must not be empty").max(255, "must be at most 255 characters"),
    ).openapi({ description: "Unique name, compared case-insensitively", example: "Core routers nightly" }),
    task_desc: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Back up the core every night" }),
    task_type: z
      .enum(TASK_TYPE_NAMES, { error: `must be one of: ${TASK_TYPE_NAMES.join(", ")}` })
      .optional()
      .openapi({
        description: `What the task does: ${typeList}. rConfig's ${RCONFIG_COMMANDS.join(", ")} are accepted as aliases.`,
        example: "download_tags",
      }),
    task_command: z
      .enum(TASK_TYPE_NAMES, { error: `must be one of: ${TASK_TYPE_NAMES.join(", ")}` })
      .optional()
      .openapi({
        description: "rConfig's name for task_type; used when task_type is not sent",
        example: "rconfig:download-tag",
      }),
    devices: ids("device").openapi({ description: "Device ids (download_devices, compliance)", example: [1, 2] }),
    categories: ids("category").openapi({ description: "Category ids (download_categories, compliance)", example: [] }),
    tags: ids("tag").openapi({ description: "Tag ids (download_tags, compliance)", example: [3] }),
    task_cron: CronInput,
    timezone: z
      .string()
      .max(64, "must be at most 64 characters")
      .refine(
        (v) => canonicalTimeZone(v) !== undefined,
        "must be an IANA time zone name such as Europe/Berlin, America/New_York or UTC",
      )
      .optional()
      .openapi({
        description: "IANA time zone the cron expression is read in (default UTC)",
        example: "Europe/Berlin",
      }),
    is_paused: z
      .boolean()
      .optional()
      .openapi({ description: "Paused tasks never run on their schedule (run-now still works)", example: false }),
    notify_on_failure: z.boolean().optional().openapi({
      description:
        "Mail each run with failures, one message listing every failed device and why, to the users subscribed to task failures (PUT /users/{id}/mail-subscriptions)",
      example: true,
    }),
    snippet_id: z
      .number()
      .int("must be a whole number")
      .positive("must be a positive id")
      .nullable()
      .optional()
      .openapi({
        description: "snippet tasks: the snippet each run deploys (creating or changing one needs snippets.write)",
        example: null,
      }),
    snippet_options: SnippetTaskOptionsInput.nullable().optional(),
    scan_preset_id: z
      .number()
      .int("must be a whole number")
      .positive("must be a positive id")
      .nullable()
      .optional()
      .openapi({
        description: "discovery_scan tasks: the scan preset each run scans (docs/discovery.md)",
        example: null,
      }),
  })
  .openapi("TaskInput");

export type TaskInputT = z.infer<typeof TaskInput>;

export const RunSummary = z.object({
  id: z.number().int(),
  status: z.enum(["running", "succeeded", "failed"]),
  trigger: z.enum(TASK_RUN_TRIGGERS),
  scheduled_for: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
});

export const Task = z
  .object({
    id: z.number().int(),
    task_name: z.string(),
    task_desc: z.string(),
    task_type: z.enum(TASK_TYPES),
    task_command: z.string().nullable().openapi({ description: "rConfig's name for the type, when it has one" }),
    devices: z
      .array(z.number().int())
      .openapi({ description: "Target device ids (for a scoped user: those in their scope)" }),
    categories: z.array(z.number().int()),
    tags: z.array(z.number().int()),
    task_cron: z.string(),
    timezone: z.string(),
    is_paused: z.boolean(),
    notify_on_failure: z.boolean(),
    is_system: z.boolean().openapi({ description: "Seeded by netkeep: can be edited and paused, not deleted" }),
    snippet_id: z.number().int().nullable().openapi({ description: "snippet tasks: the snippet each run deploys" }),
    scan_preset_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "discovery_scan tasks: the scan preset each run scans" }),
    snippet_options: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "snippet tasks: the deploy settings" }),
    next_runs: z.array(z.string()).openapi({
      description: "The next three scheduled run times (UTC); empty while paused",
      example: ["2026-06-02T00:30:00.000Z"],
    }),
    last_run: RunSummary.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Task");

export type TaskOut = z.infer<typeof Task>;

export const ITEM_STATUSES = ["queued", "running", "succeeded", "unchanged", "failed", "skipped"] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

const Counts = z
  .object({
    total: z.number().int(),
    succeeded: z.number().int(),
    unchanged: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
  })
  .openapi({ description: "Devices by outcome (finished ones only; skipped: disabled, or deleted since)" });

const Progress = z
  .object({
    queued: z.number().int(),
    running: z.number().int(),
    finished: z.number().int(),
    total: z.number().int(),
  })
  .openapi({ description: "Jobs by state, for a run in progress (skipped devices have no job)" });

export const TaskRun = z
  .object({
    id: z.number().int(),
    task_id: z.number().int(),
    task_name: z.string(),
    task_type: z.enum(TASK_TYPES),
    status: z.enum(["running", "succeeded", "failed"]).openapi({
      description: "running until its last job finishes; then failed if any device failed, else succeeded",
    }),
    trigger: z.enum(TASK_RUN_TRIGGERS).openapi({
      description: "schedule, catch_up (started late for slots missed while no scheduler ran), or manual (run now)",
    }),
    missed_slots: z.number().int().openapi({
      description: "For catch_up: how many scheduled slots passed without a run (at most 1000 are counted)",
    }),
    scheduled_for: z
      .string()
      .nullable()
      .openapi({ description: "The cron slot the run is for; null for a manual run" }),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
    counts: Counts,
    progress: Progress,
    status_url: z.string(),
    devices_url: z.string(),
    report_url: z.string(),
  })
  .openapi("TaskRun");

export type TaskRunOut = z.infer<typeof TaskRun>;

export const TaskRunItem = z
  .object({
    id: z.number().int(),
    run_id: z.number().int(),
    device_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Null for a system task's work, or a device deleted since" }),
    device_name: z.string().nullable(),
    status: z.enum(ITEM_STATUSES),
    outcome: z
      .enum(JOB_OUTCOMES)
      .nullable()
      .openapi({ description: "The job's outcome once finished (auth_failed, unreachable, timeout ...)" }),
    error: z.string().nullable().openapi({ description: "Why it failed or was skipped" }),
    message: z.string().nullable().openapi({ description: "The job's message, whatever the outcome" }),
    duration_ms: z.number().int().nullable(),
    attempts: z.number().int().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    job_id: z.number().int().nullable(),
    job_url: z.string().nullable(),
    config_ids: z
      .array(z.number().int())
      .openapi({ description: "The configuration versions the download produced or confirmed" }),
    config_urls: z.array(z.string()),
  })
  .openapi("TaskRunItem");

export type TaskRunItemOut = z.infer<typeof TaskRunItem>;

export const TaskRunReport = z.object({ run: TaskRun, devices: z.array(TaskRunItem) }).openapi("TaskRunReport");

export const LastRunFailures = z
  // A union, not TaskRun.nullable(): the generator writes that as allOf [TaskRun, object-or-null], which refuses null.
  .object({
    run: z.union([TaskRun, z.null()]).openapi({ description: "null until the task finishes a run" }),
    failures: z.array(TaskRunItem),
  })
  .openapi("TaskLastRunFailures");
