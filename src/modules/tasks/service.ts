import { and, count, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { getSettings } from "../../platform/settings/service.ts";
import { categories, devices, tags, TASK_TYPES, tasks, type TaskType } from "../../db/schema/index.ts";
import type { AuthContext, Services } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { booleanFilter, idFilter } from "../../platform/http/filters.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { checkUniqueName, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { nameKey } from "../../db/name-key.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { canonicalTimeZone, cronText, nextRuns } from "../../kernel/cron.ts";
import { getRun, latestRuns, type Links } from "./runs.ts";
import { Task, type TaskInputT, type TaskOut, type TaskRunOut } from "./schemas.ts";
import { startTaskRun, type Task as TaskRow } from "./start-run.ts";
import { reachBeyondScope, taskReach, visibleTasks } from "./targets.ts";
import { canonicalTaskType, TARGET_LISTS, TASK_TYPE_DEFS, type TargetList } from "./types.ts";
import { snippetTaskValues } from "./snippet-runs.ts";
import { scanTaskValues } from "../discovery/index.ts";

/** Who is asking and when: what every task operation needs from the request. */
export type TaskCtx = { db: DbOrTx; auth: AuthContext; services: Services; now: Date; links: Links };

export const taskListSpec: ListSpec = {
  fields: Object.keys(Task.shape),
  filters: {
    id: idFilter(tasks.id, "id", "Task id"),
    task_name: nameFilter(tasks.nameKey),
    task_type: {
      describe: `Task type: ${TASK_TYPES.join(", ")}`,
      example: TASK_TYPES[0],
      build: (v) => {
        const types = v.map((name) => canonicalTaskType(name));
        const bad = v.find((_, i) => !types[i]);
        if (bad) throw new ApiError(422, `filter[task_type] must be one of: ${TASK_TYPES.join(", ")}; '${bad}' is not`);
        return inArray(tasks.type, types as TaskType[]);
      },
    },
    is_paused: booleanFilter(tasks.paused, "is_paused"),
    is_system: {
      describe: "true or false: tasks netkeep seeded",
      build: (v) => {
        if (v.some((s) => s !== "true" && s !== "false"))
          throw new ApiError(422, "filter[is_system] must be true or false");
        return sql`(${sql.join(
          v.map((s) => (s === "true" ? sql`${tasks.systemKey} is not null` : sql`${tasks.systemKey} is null`)),
          sql` or `,
        )})`;
      },
    },
  },
  sorts: {
    id: tasks.id,
    task_name: sql`lower(${tasks.name})`,
    created_at: tasks.createdAt,
    updated_at: tasks.updatedAt,
  },
  defaultSort: "task_name",
  idColumn: tasks.id,
  search: {
    describe: "Substring of the name or description",
    build: (term) => sql`(${containsText(tasks.name, term)} or ${containsText(tasks.description, term)})`,
  },
};

const ids = (rows: { id: number }[]) => new Set(rows.map((r) => r.id));

/** Of these ids, the ones that still exist (devices: and are in the scope). */
async function existing(db: DbOrTx, list: TargetList, wanted: number[], scope: DeviceScope): Promise<Set<number>> {
  if (!wanted.length) return new Set();
  const json = JSON.stringify(wanted);
  const inList = (col: SQLiteColumn) => inArray(col, sql`(select value from json_each(${json}))`);
  if (list === "devices")
    return ids(
      await db
        .select({ id: devices.id })
        .from(devices)
        .where(and(inList(devices.id), deviceScopeCondition(scope))),
    );
  if (list === "categories")
    return ids(await db.select({ id: categories.id }).from(categories).where(inList(categories.id)));
  return ids(await db.select({ id: tags.id }).from(tags).where(inList(tags.id)));
}

const listOf = (row: TaskRow, list: TargetList) =>
  list === "devices" ? row.deviceIds : list === "categories" ? row.categoryIds : row.tagIds;

export async function serializeTasks(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  rows: TaskRow[],
  now: Date,
): Promise<TaskOut[]> {
  const all = (list: TargetList) => [...new Set(rows.flatMap((r) => listOf(r, list)))];
  const [liveDevices, liveCategories, liveTags, lastRuns] = await Promise.all([
    existing(db, "devices", all("devices"), scope),
    existing(db, "categories", all("categories"), scope),
    existing(db, "tags", all("tags"), scope),
    latestRuns(
      db,
      scope,
      links,
      rows.map((r) => r.id),
    ),
  ]);
  return rows.map((r) => {
    const last = lastRuns.get(r.id);
    return {
      id: r.id,
      task_name: r.name,
      task_desc: r.description,
      task_type: r.type,
      task_command: TASK_TYPE_DEFS[r.type].rconfigCommand ?? null,
      // Deleted records drop out of the targets as they would through a foreign key; a scoped user sees only their devices.
      devices: r.deviceIds.filter((id) => liveDevices.has(id)),
      categories: r.categoryIds.filter((id) => liveCategories.has(id)),
      tags: r.tagIds.filter((id) => liveTags.has(id)),
      task_cron: r.cron,
      timezone: r.timezone,
      is_paused: r.paused,
      notify_on_failure: r.notifyOnFailure,
      is_system: r.systemKey !== null,
      snippet_id: r.snippetId,
      scan_preset_id: r.scanPresetId,
      snippet_options: r.snippetOptions,
      next_runs: r.paused ? [] : nextRuns(r, now, 3).map((d) => d.toISOString()),
      last_run: last
        ? {
            id: last.id,
            status: last.status,
            trigger: last.trigger,
            scheduled_for: last.scheduled_for,
            started_at: last.started_at,
            finished_at: last.finished_at,
          }
        : null,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    };
  });
}

export async function listTasks(ctx: TaskCtx, q: ListQuery): Promise<{ total: number; rows: TaskOut[] }> {
  const where = and(q.where, visibleTasks(ctx.auth.scope));
  const [rows, [total]] = await Promise.all([
    ctx.db
      .select()
      .from(tasks)
      .where(where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    ctx.db.select({ n: count() }).from(tasks).where(where),
  ]);
  return { total: total?.n ?? 0, rows: await serializeTasks(ctx.db, ctx.auth.scope, ctx.links, rows, ctx.now) };
}

/** The task, if the caller may see it; 404 otherwise, so a task outside the scope does not reveal itself. */
export async function visibleTask(db: DbOrTx, scope: DeviceScope, id: number): Promise<TaskRow> {
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, id), visibleTasks(scope)));
  if (!row) throw ApiError.notFound(`Task ${id}`);
  return row;
}

export async function showTask(ctx: TaskCtx, id: number): Promise<TaskOut> {
  return (
    await serializeTasks(ctx.db, ctx.auth.scope, ctx.links, [await visibleTask(ctx.db, ctx.auth.scope, id)], ctx.now)
  )[0]!;
}

const SINGULAR: Record<TargetList, string> = { devices: "device", categories: "category", tags: "tag" };

/**
 * The target lists a write ends with. The list the type uses must name at least one existing record; the
 * others must be empty (or left out) and are stored empty. A scoped user may name only devices, tags and
 * categories of their scope, and no task type that reaches every device.
 */
async function targetValues(
  ctx: TaskCtx,
  bag: FieldErrorBag,
  type: TaskType,
  input: Partial<TaskInputT>,
  before: TaskRow | null,
  patch: boolean,
) {
  const uses = TASK_TYPE_DEFS[type].targets;
  const values = {} as Record<TargetList, number[]>;
  for (const list of TARGET_LISTS) {
    const sent = input[list];
    if (uses !== list && uses !== "lists") {
      if (sent?.length)
        bag.add(
          list,
          `${list} must be empty for ${type} tasks, which ${uses === "all" ? "back up every device" : uses === "none" ? "have no targets" : `target ${uses}`}`,
        );
      values[list] = [];
      continue;
    }
    const kept = before && before.type === type ? listOf(before, list) : [];
    if (sent === undefined) {
      values[list] = patch ? kept : [];
    } else {
      const wanted = [...new Set(sent)];
      const found = await existing(ctx.db, list, wanted, ctx.auth.scope);
      const unknown = wanted.filter((id) => !found.has(id));
      if (unknown.length)
        bag.add(
          list,
          `${list} has unknown ${SINGULAR[list]} id${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}`,
        );
      values[list] = wanted.sort((a, b) => a - b);
    }
    if (!values[list].length && uses === list)
      bag.add(list, `${list} must list at least one ${SINGULAR[list]} id for ${type} tasks`);
  }
  if (bag.empty) {
    const beyond = await reachBeyondScope(ctx.db, ctx.auth.scope, {
      type,
      deviceIds: values.devices,
      categoryIds: values.categories,
      tagIds: values.tags,
    });
    if (beyond) bag.add((TARGET_LISTS as readonly string[]).includes(uses) ? uses : "task_type", beyond);
  }
  return values;
}

/**
 * A scoped user changes or runs only a task all of whose targets are in their scope (see reachBeyondScope); one
 * they can see but that reaches further answers 403 (one they cannot see at all has already answered 404).
 */
async function assertTaskInScope(db: DbOrTx, auth: AuthContext, task: TaskRow): Promise<void> {
  const beyond = await reachBeyondScope(db, auth.scope, task);
  if (beyond) {
    throw new ApiError(
      403,
      `Task ${task.id} ('${task.name}') is not yours to change or run: ${beyond}; ask a user whose role sees every device it targets`,
    );
  }
}

/** Whether the caller may change, pause, resume or run this task (pages show those buttons only then). */
export async function mayChangeTask(db: DbOrTx, auth: AuthContext, id: number): Promise<boolean> {
  if (auth.scope.all) return true;
  return !(await reachBeyondScope(db, auth.scope, await visibleTask(db, auth.scope, id)));
}

/**
 * Create (id null), replace (PUT) or patch: validate everything, write the task and its audit entry in one
 * transaction. A changed schedule, or a resume, restarts the schedule from now: no catch-up for the time before.
 */
export async function saveTask(
  ctx: TaskCtx,
  input: Partial<TaskInputT>,
  id: number | null,
  mode: WriteCtx["mode"],
): Promise<TaskOut> {
  return ctx.services.db.transaction(async (tx) => {
    const c: TaskCtx = { ...ctx, db: tx };
    const before = id === null ? null : await visibleTask(tx, ctx.auth.scope, id);
    if (before) await assertTaskInScope(tx, ctx.auth, before);
    const patch = mode === "patch";
    const bag = new FieldErrorBag();
    const writeCtx: WriteCtx = { tx, auth: ctx.auth, services: ctx.services, now: ctx.now, bag, mode };

    const typeName = input.task_type ?? input.task_command;
    const type = typeName ? canonicalTaskType(typeName)! : patch ? before!.type : undefined;
    if (!type) bag.add("task_type", "task_type is required (or rConfig's task_command)");
    if (before?.systemKey && type && type !== before.type) {
      bag.add("task_type", `task_type of the system task '${before.name}' cannot change (it stays ${before.type})`);
    }
    await checkUniqueName(writeCtx, tasks.nameKey, tasks.id, input.task_name, before?.id ?? null, "task_name");
    const targets = type ? await targetValues(c, bag, type, input, before, patch) : undefined;
    const snippet = type ? await snippetTaskValues(tx, bag, ctx.auth, type, input, before, patch) : undefined;
    const scan = type ? await scanTaskValues(tx, bag, ctx.auth, type, input, before, patch) : undefined;
    bag.throwIfAny();

    const cron = input.task_cron !== undefined ? cronText(input.task_cron) : before!.cron;
    // A task sent without a zone reads its cron in the zone the settings name (UTC unless changed).
    const timezone =
      input.timezone !== undefined
        ? canonicalTimeZone(input.timezone)!
        : patch
          ? before!.timezone
          : (await getSettings(tx)).settings.timezone;
    const paused = input.is_paused ?? (patch ? before!.paused : false);
    const values = {
      name: input.task_name ?? before!.name,
      nameKey: nameKey(input.task_name ?? before!.name),
      description: input.task_desc ?? (patch ? before!.description : ""),
      type: type!,
      deviceIds: targets!.devices,
      categoryIds: targets!.categories,
      tagIds: targets!.tags,
      ...snippet!,
      ...scan!,
      cron,
      timezone,
      paused,
      notifyOnFailure: input.notify_on_failure ?? (patch ? before!.notifyOnFailure : false),
      scheduleFrom:
        !before || cron !== before.cron || timezone !== before.timezone || (before.paused && !paused)
          ? ctx.now
          : before.scheduleFrom,
      updatedAt: ctx.now,
    };

    const snapshot = before ? (await serializeTasks(tx, ctx.auth.scope, ctx.links, [before], ctx.now))[0]! : null;
    let savedId: number;
    if (before) {
      await tx.update(tasks).set(values).where(eq(tasks.id, before.id));
      savedId = before.id;
    } else {
      const [row] = await tx
        .insert(tasks)
        .values({ ...values, createdAt: ctx.now })
        .returning({ id: tasks.id });
      savedId = row!.id;
    }
    const [visible] = await tx
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(eq(tasks.id, savedId), visibleTasks(ctx.auth.scope)));
    if (!visible) {
      const uses = TASK_TYPE_DEFS[type!].targets;
      const field = (TARGET_LISTS as readonly string[]).includes(uses) ? uses : "task_type";
      throw ApiError.validation({
        [field]: [`${field} must make the task reach at least one device your role may see`],
      });
    }
    const after = await showTask(c, savedId);
    await recordActivity(
      tx,
      ctx.auth,
      {
        action: before ? "task.update" : "task.create",
        subjectType: "task",
        subjectId: savedId,
        before: snapshot,
        after,
        reach: taskReach(...(before ? [before] : []), values),
      },
      ctx.now,
    );
    return after;
  });
}

export async function deleteTask(ctx: TaskCtx, id: number): Promise<void> {
  await ctx.services.db.transaction(async (tx) => {
    const row = await visibleTask(tx, ctx.auth.scope, id);
    await assertTaskInScope(tx, ctx.auth, row);
    if (row.systemKey)
      throw ApiError.conflict(`Task ${id} ('${row.name}') is a system task: pause it instead of deleting it`);
    const before = (await serializeTasks(tx, ctx.auth.scope, ctx.links, [row], ctx.now))[0]!;
    await tx.delete(tasks).where(eq(tasks.id, id));
    await recordActivity(
      tx,
      ctx.auth,
      { action: "task.delete", subjectType: "task", subjectId: id, before, after: null, reach: taskReach(row) },
      ctx.now,
    );
  });
}

/** Pause or resume. Resuming restarts the schedule from now: slots that passed while paused never run. */
export async function setPaused(ctx: TaskCtx, id: number, paused: boolean): Promise<TaskOut> {
  return ctx.services.db.transaction(async (tx) => {
    const c: TaskCtx = { ...ctx, db: tx };
    const row = await visibleTask(tx, ctx.auth.scope, id);
    await assertTaskInScope(tx, ctx.auth, row);
    if (row.paused === paused) return showTask(c, id);
    const before = (await serializeTasks(tx, ctx.auth.scope, ctx.links, [row], ctx.now))[0]!;
    await tx
      .update(tasks)
      .set({ paused, updatedAt: ctx.now, ...(paused ? {} : { scheduleFrom: ctx.now }) })
      .where(eq(tasks.id, id));
    const after = await showTask(c, id);
    await recordActivity(
      tx,
      ctx.auth,
      {
        action: paused ? "task.pause" : "task.resume",
        subjectType: "task",
        subjectId: id,
        before,
        after,
        reach: taskReach(row),
      },
      ctx.now,
    );
    return after;
  });
}

/** Run now: a manual run, whatever the schedule or pause state, with its jobs queued at API priority. */
export async function runTaskNow(ctx: TaskCtx, id: number): Promise<TaskRunOut> {
  const runId = await ctx.services.db.transaction(async (tx) => {
    const row = await visibleTask(tx, ctx.auth.scope, id);
    await assertTaskInScope(tx, ctx.auth, row);
    const run = (await startTaskRun(
      tx,
      row,
      { trigger: "manual", scheduledFor: null, requestedBy: ctx.auth.userId },
      ctx.now,
    ))!;
    await recordActivity(
      tx,
      ctx.auth,
      { action: "task.run", subjectType: "task", subjectId: id, after: { run_id: run.id }, reach: taskReach(row) },
      ctx.now,
    );
    return run.id;
  });
  ctx.services.jobsQueued();
  return getRun(ctx.db, ctx.auth.scope, ctx.links, runId);
}
