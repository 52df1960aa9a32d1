import { and, asc, count, eq, gte, inArray, isNotNull, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { jobs, TASK_RUN_TRIGGERS, taskRunItems, taskRuns, tasks } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { idFilter, instantValue } from "../../platform/http/filters.ts";
import {
  ITEM_STATUSES,
  TaskRun,
  TaskRunItem,
  type ItemStatus,
  type TaskRunItemOut,
  type TaskRunOut,
} from "./schemas.ts";
import { visibleItems, visibleRunIds } from "./targets.ts";

/** Absolute API URLs of a version ("v1") for links in answers. */
export type Links = { base: string; version: string };
const url = (l: Links, path: string) => `${l.base}/api/${l.version}${path}`;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * An item's status, computed from its job every time it is read (nothing is copied from the job, so nothing
 * can drift): no job means skipped; an unfinished job is queued or running; a finished one is succeeded,
 * unchanged or failed by its outcome.
 */
const itemStatus = sql<ItemStatus>`(case
  when ${taskRunItems.jobId} is null then 'skipped'
  when ${jobs.state} = 'queued' then 'queued'
  when ${jobs.state} = 'running' then 'running'
  when ${jobs.outcome} = 'success' then 'succeeded'
  when ${jobs.outcome} = 'unchanged' then 'unchanged'
  else 'failed' end)`;

const statusCount = (status: ItemStatus) => sql<number>`coalesce(sum(${itemStatus} = ${status}), 0)`;

/** A finished run is failed when any device it shows the caller failed. */
const hasVisibleFailure = (scope: DeviceScope) => sql`exists (
  select 1 from ${taskRunItems} join ${jobs} on ${jobs.id} = ${taskRunItems.jobId}
  where ${and(sql`${taskRunItems.runId} = ${taskRuns.id}`, eq(jobs.state, "finished"), sql`${jobs.outcome} not in ('success', 'unchanged')`, visibleItems(scope))})`;

const RUN_STATUSES = ["running", "succeeded", "failed"] as const;

function runStatusCondition(scope: DeviceScope, status: string): SQL {
  if (status === "running") return isNull(taskRuns.finishedAt);
  if (status === "failed") return and(isNotNull(taskRuns.finishedAt), hasVisibleFailure(scope))!;
  if (status === "succeeded") return and(isNotNull(taskRuns.finishedAt), sql`not ${hasVisibleFailure(scope)}`)!;
  throw new ApiError(422, `filter[status] must be one of: ${RUN_STATUSES.join(", ")}; '${status}' is not`);
}

/** Run lists read the scope, so the spec is built per request. */
export function runListSpec(scope: DeviceScope): ListSpec {
  return {
    fields: Object.keys(TaskRun.shape),
    filters: {
      id: idFilter(taskRuns.id, "id", "Run id"),
      task_id: idFilter(taskRuns.taskId, "task_id", "Task id"),
      status: {
        describe: `Run status: ${RUN_STATUSES.join(", ")}`,
        example: "failed",
        build: (v) =>
          sql`(${sql.join(
            v.map((s) => runStatusCondition(scope, s)),
            sql` or `,
          )})`,
      },
      trigger: {
        describe: `How the run started: ${TASK_RUN_TRIGGERS.join(", ")}`,
        example: TASK_RUN_TRIGGERS[0],
        build: (v) => {
          const bad = v.find((s) => !(TASK_RUN_TRIGGERS as readonly string[]).includes(s));
          if (bad)
            throw new ApiError(422, `filter[trigger] must be one of: ${TASK_RUN_TRIGGERS.join(", ")}; '${bad}' is not`);
          return inArray(taskRuns.trigger, v as (typeof TASK_RUN_TRIGGERS)[number][]);
        },
      },
      started_after: {
        describe: "ISO-8601 time: runs started at or after it (one value)",
        build: (v) => gte(taskRuns.startedAt, instantValue("started_after", v)),
      },
      started_before: {
        describe: "ISO-8601 time: runs started strictly before it (one value)",
        build: (v) => lt(taskRuns.startedAt, instantValue("started_before", v)),
      },
    },
    sorts: {
      id: taskRuns.id,
      started_at: taskRuns.startedAt,
      scheduled_for: taskRuns.scheduledFor,
      finished_at: taskRuns.finishedAt,
    },
    defaultSort: "-id",
    idColumn: taskRuns.id,
  };
}

/** Items of one run, filtered by status or device. */
export const itemListSpec: ListSpec = {
  fields: Object.keys(TaskRunItem.shape),
  filters: {
    status: {
      describe: `Device status in the run: ${ITEM_STATUSES.join(", ")}`,
      example: "failed",
      build: (v) => {
        const bad = v.find((s) => !(ITEM_STATUSES as readonly string[]).includes(s));
        if (bad) throw new ApiError(422, `filter[status] must be one of: ${ITEM_STATUSES.join(", ")}; '${bad}' is not`);
        return inArray(itemStatus, v);
      },
    },
    device_id: idFilter(taskRunItems.deviceId, "device_id", "Device id"),
  },
  sorts: { id: taskRunItems.id, device_name: sql`lower(${taskRunItems.deviceName})`, status: itemStatus },
  defaultSort: "id",
  idColumn: taskRunItems.id,
  search: { describe: "Substring of the device name", build: (term) => containsText(taskRunItems.deviceName, term) },
};

type RunRow = typeof taskRuns.$inferSelect & { taskName: string };

/** Outcome counts and progress per run, over the items the caller may see. */
async function countsOf(db: DbOrTx, scope: DeviceScope, runIds: number[]) {
  if (!runIds.length) return new Map<number, Record<ItemStatus, number>>();
  const rows = await db
    .select({
      runId: taskRunItems.runId,
      ...(Object.fromEntries(ITEM_STATUSES.map((s) => [s, statusCount(s)])) as Record<ItemStatus, SQL<number>>),
    })
    .from(taskRunItems)
    .leftJoin(jobs, eq(jobs.id, taskRunItems.jobId))
    .where(and(inArray(taskRunItems.runId, runIds), visibleItems(scope)))
    .groupBy(taskRunItems.runId);
  return new Map(rows.map((r) => [r.runId, r as unknown as Record<ItemStatus, number>]));
}

/** Outcome counts per run: every item's (a task.run.finished event), or those a scope sees (its mail). */
export const runOutcomeCounts = (db: DbOrTx, runIds: number[], scope: DeviceScope = { all: true }) =>
  countsOf(db, scope, runIds);

async function serializeRuns(db: DbOrTx, scope: DeviceScope, links: Links, rows: RunRow[]): Promise<TaskRunOut[]> {
  // A finished run's counts over every item were kept when it finished; a scoped caller's are counted.
  const counts = await countsOf(
    db,
    scope,
    rows.filter((r) => !(scope.all && r.counts)).map((r) => r.id),
  );
  if (scope.all) for (const r of rows) if (r.counts) counts.set(r.id, r.counts as Record<ItemStatus, number>);
  return rows.map((r) => {
    const c = counts.get(r.id) ?? { queued: 0, running: 0, succeeded: 0, unchanged: 0, failed: 0, skipped: 0 };
    const n = (s: ItemStatus) => Number(c[s] ?? 0);
    const finished = n("succeeded") + n("unchanged") + n("failed");
    return {
      id: r.id,
      task_id: r.taskId,
      task_name: r.taskName,
      task_type: r.taskType,
      status: r.finishedAt === null ? "running" : n("failed") > 0 ? "failed" : "succeeded",
      trigger: r.trigger,
      missed_slots: r.missedSlots,
      scheduled_for: iso(r.scheduledFor),
      started_at: r.startedAt.toISOString(),
      finished_at: iso(r.finishedAt),
      duration_ms: r.finishedAt ? r.finishedAt.getTime() - r.startedAt.getTime() : null,
      counts: {
        total: finished + n("skipped") + n("queued") + n("running"),
        succeeded: n("succeeded"),
        unchanged: n("unchanged"),
        failed: n("failed"),
        skipped: n("skipped"),
      },
      progress: { queued: n("queued"), running: n("running"), finished, total: finished + n("queued") + n("running") },
      status_url: url(links, `/task-runs/${r.id}`),
      devices_url: url(links, `/task-runs/${r.id}/devices`),
      report_url: url(links, `/task-runs/${r.id}/report.csv`),
    };
  });
}

const selectRuns = (db: DbOrTx) =>
  db
    .select({
      id: taskRuns.id,
      taskId: taskRuns.taskId,
      taskType: taskRuns.taskType,
      trigger: taskRuns.trigger,
      scheduledFor: taskRuns.scheduledFor,
      missedSlots: taskRuns.missedSlots,
      requestedBy: taskRuns.requestedBy,
      startedAt: taskRuns.startedAt,
      finishedAt: taskRuns.finishedAt,
      counts: taskRuns.counts,
      taskName: tasks.name,
    })
    .from(taskRuns)
    .innerJoin(tasks, eq(tasks.id, taskRuns.taskId));

const visibleRuns = (scope: DeviceScope) => {
  const ids = visibleRunIds(scope);
  return ids ? inArray(taskRuns.id, ids) : undefined;
};

export async function listRuns(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  q: ListQuery,
  extra?: SQL,
): Promise<{ total: number; rows: TaskRunOut[] }> {
  const where = and(q.where, visibleRuns(scope), extra);
  const [rows, [total]] = await Promise.all([
    selectRuns(db)
      .where(where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(taskRuns).where(where),
  ]);
  return { total: total?.n ?? 0, rows: await serializeRuns(db, scope, links, rows) };
}

/** One task's runs, as GET /tasks/{id}/runs lists them (the caller has checked the task is visible). */
export const listTaskRuns = (db: DbOrTx, scope: DeviceScope, links: Links, taskId: number, q: ListQuery) =>
  listRuns(db, scope, links, q, eq(taskRuns.taskId, taskId));

export async function getRun(db: DbOrTx, scope: DeviceScope, links: Links, id: number): Promise<TaskRunOut> {
  const [row] = await selectRuns(db).where(and(eq(taskRuns.id, id), visibleRuns(scope)));
  if (!row) throw ApiError.notFound(`Task run ${id}`);
  return (await serializeRuns(db, scope, links, [row]))[0]!;
}

/** The latest finished run of a task the caller may see, if any. */
export async function lastFinishedRun(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  taskId: number,
): Promise<TaskRunOut | null> {
  const [row] = await selectRuns(db)
    .where(and(eq(taskRuns.taskId, taskId), isNotNull(taskRuns.finishedAt), visibleRuns(scope)))
    .orderBy(sql`${taskRuns.startedAt} desc`, sql`${taskRuns.id} desc`)
    .limit(1);
  return row ? (await serializeRuns(db, scope, links, [row]))[0]! : null;
}

/** The latest run of each task (any status), for the task list's last_run. */
export async function latestRuns(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  taskIds: number[],
): Promise<Map<number, TaskRunOut>> {
  if (!taskIds.length) return new Map();
  const latest = db
    .select({ id: sql<number>`max(${taskRuns.id})`.as("id") })
    .from(taskRuns)
    .where(and(inArray(taskRuns.taskId, taskIds), visibleRuns(scope)))
    .groupBy(taskRuns.taskId);
  const rows = await selectRuns(db).where(inArray(taskRuns.id, sql`(select id from ${latest})`));
  const runs = await serializeRuns(db, scope, links, rows);
  return new Map(runs.map((r) => [r.task_id, r]));
}

type ItemRow = {
  id: number;
  runId: number;
  deviceId: number | null;
  deviceName: string | null;
  jobId: number | null;
  skipReason: string | null;
  status: ItemStatus;
  outcome: (typeof jobs.$inferSelect)["outcome"] | null;
  message: string | null;
  result: Record<string, unknown> | null;
  attempts: number | null;
  startedAt: Date | null;
  finishedAt: Date | null;
};

const selectItems = (db: DbOrTx) =>
  db
    .select({
      id: taskRunItems.id,
      runId: taskRunItems.runId,
      deviceId: taskRunItems.deviceId,
      deviceName: taskRunItems.deviceName,
      jobId: taskRunItems.jobId,
      skipReason: taskRunItems.skipReason,
      status: itemStatus,
      outcome: jobs.outcome,
      message: jobs.message,
      result: jobs.result,
      attempts: jobs.attempts,
      startedAt: jobs.startedAt,
      finishedAt: jobs.finishedAt,
    })
    .from(taskRunItems)
    .leftJoin(jobs, eq(jobs.id, taskRunItems.jobId));

function serializeItem(links: Links, r: ItemRow): TaskRunItemOut {
  const finished = r.status === "succeeded" || r.status === "unchanged" || r.status === "failed";
  const result = (finished ? r.result : null) ?? {};
  const configIds = Array.isArray(result.config_ids)
    ? (result.config_ids as unknown[]).filter((v): v is number => typeof v === "number")
    : [];
  const error =
    r.status === "failed"
      ? (r.message ?? r.outcome)
      : r.status === "skipped"
        ? (r.skipReason ?? "the device or its job was deleted")
        : null;
  return {
    id: r.id,
    run_id: r.runId,
    device_id: r.deviceId,
    device_name: r.deviceName,
    status: r.status,
    outcome: finished ? r.outcome : null,
    error,
    message: r.message,
    duration_ms: typeof result.duration_ms === "number" ? result.duration_ms : null,
    attempts: r.attempts,
    started_at: iso(r.startedAt),
    finished_at: finished ? iso(r.finishedAt) : null,
    job_id: r.jobId,
    job_url: r.jobId ? url(links, `/jobs/${r.jobId}`) : null,
    config_ids: configIds,
    config_urls: configIds.map((id) => url(links, `/configs/${id}`)),
  };
}

export async function listItems(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  runId: number,
  q: ListQuery,
): Promise<{ total: number; rows: TaskRunItemOut[] }> {
  const where = and(eq(taskRunItems.runId, runId), q.where, visibleItems(scope));
  const [rows, [total]] = await Promise.all([
    selectItems(db)
      .where(where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(taskRunItems).leftJoin(jobs, eq(jobs.id, taskRunItems.jobId)).where(where),
  ]);
  return { total: total?.n ?? 0, rows: rows.map((r) => serializeItem(links, r)) };
}

/** Every item of a run the caller may see (for reports), optionally only some statuses (and the first `limit`), in device order. */
export async function allItems(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  runId: number,
  statuses?: ItemStatus[],
  limit?: number,
): Promise<TaskRunItemOut[]> {
  const query = selectItems(db)
    .where(
      and(eq(taskRunItems.runId, runId), visibleItems(scope), statuses ? inArray(itemStatus, statuses) : undefined),
    )
    .orderBy(sql`lower(${taskRunItems.deviceName})`, asc(taskRunItems.id));
  const rows = limit === undefined ? await query : await query.limit(limit);
  return rows.map((r) => serializeItem(links, r));
}
