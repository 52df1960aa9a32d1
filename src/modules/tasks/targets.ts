import { and, count, inArray, not, or, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import type { Reach } from "../../platform/audit/record.ts";
import { devices, taskRunItems, tasks, type TaskType } from "../../db/schema/index.ts";
import { TASK_TYPE_DEFS, type TargetKind } from "./types.ts";
import { reachedBy, selectedDevices } from "../devices/index.ts";

/** The devices one task reaches right now (deleted ids simply match nothing). */
export function taskTargetCondition(task: {
  type: TaskType;
  deviceIds: number[];
  categoryIds: number[];
  tagIds: number[];
}): SQL {
  return selectedDevices(TASK_TYPE_DEFS[task.type].targets, task);
}

/** The ids of the devices inside the scope, as a subquery. */
export const inScopeDeviceIds = (scope: DeviceScope) =>
  sql`(select ${devices.id} from ${devices} where ${deviceScopeCondition(scope)})`;

/**
 * Which tasks a scoped user sees: those reaching at least one device in their scope (so system tasks, which
 * reach no device, are hidden from them). Undefined for an unscoped user: everything is visible.
 */
export function visibleTasks(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  const lists = { devices: tasks.deviceIds, categories: tasks.categoryIds, tags: tasks.tagIds };
  const byType = (Object.entries(TASK_TYPE_DEFS) as [TaskType, { targets: TargetKind }][])
    .filter(([, d]) => d.targets !== "none")
    .map(([type, d]) => and(sql`${tasks.type} = ${type}`, reachedBy(d.targets, lists))!);
  return sql`exists (select 1 from ${devices} where ${and(deviceScopeCondition(scope), or(...byType))})`;
}

/** A run's items a scoped user sees: those about devices in their scope. */
export function visibleItems(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  return inArray(taskRunItems.deviceId, inScopeDeviceIds(scope));
}

/** Runs a scoped user sees: those with at least one item about a device in their scope. */
export function visibleRunIds(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  return sql`(select ${taskRunItems.runId} from ${taskRunItems} where ${visibleItems(scope)})`;
}

type TargetedTask = { type: TaskType; deviceIds: number[]; categoryIds: number[]; tagIds: number[] };

/** What an activity entry about a task is about: the targets of each version of it the entry shows. */
export function taskReach(...versions: TargetedTask[]): Reach {
  const reach = { devices: [] as number[], tags: [] as number[], categories: [] as number[] };
  for (const task of versions) {
    const kind = TASK_TYPE_DEFS[task.type].targets;
    if (kind === "all" || kind === "none" || (kind === "lists" && reachesEveryDevice(task))) return { all: true };
    if (kind === "devices" || kind === "lists") reach.devices.push(...task.deviceIds);
    if (kind === "tags" || kind === "lists") reach.tags.push(...task.tagIds);
    if (kind === "categories" || kind === "lists") reach.categories.push(...task.categoryIds);
  }
  return reach;
}

/**
 * Why a task may reach devices outside the scope, or null when it cannot: a scoped user may create, change or
 * run only a task for which this is null. Judged from the task's target lists, not from which devices they
 * reach today, so the answer neither depends on nor reveals devices the caller cannot see: a tag or category
 * task must name only tags or categories of the scope (every device carrying one is in it), a device task only
 * devices in the scope (deleted ones no longer count), and a task for every device or for system work never
 * qualifies.
 */
export async function reachBeyondScope(db: DbOrTx, scope: DeviceScope, task: TargetedTask): Promise<string | null> {
  if (scope.all) return null;
  const kind = TASK_TYPE_DEFS[task.type].targets;
  if (kind === "lists") {
    // Each list is judged as its own kind of task would be; with all three empty the task reaches every device.
    if (reachesEveryDevice(task))
      return `${task.type} tasks without devices, tags or categories reach every device, including devices outside your role's scope`;
    for (const list of ["devices", "tags", "categories"] as const) {
      const reason = await reachBeyondScopeOf(db, scope, task, list);
      if (reason) return reason;
    }
    return null;
  }
  return reachBeyondScopeOf(db, scope, task, kind);
}

const reachesEveryDevice = (task: TargetedTask) =>
  !task.deviceIds.length && !task.tagIds.length && !task.categoryIds.length;

async function reachBeyondScopeOf(
  db: DbOrTx,
  scope: Exclude<DeviceScope, { all: true }>,
  task: TargetedTask,
  kind: Exclude<TargetKind, "lists">,
): Promise<string | null> {
  switch (kind) {
    case "all":
      return `${task.type} tasks back up every device, including devices outside your role's scope`;
    case "none":
      return `${task.type} tasks act on every device's configurations, including devices outside your role's scope`;
    case "tags":
    case "categories": {
      const allowed = kind === "tags" ? scope.tagIds : scope.categoryIds;
      const outside = (kind === "tags" ? task.tagIds : task.categoryIds).filter((id) => !allowed.includes(id));
      return outside.length
        ? `${kind} ${outside.join(", ")} ${outside.length === 1 ? "is" : "are"} not among the ${kind} of your role's scope` +
            ` (${allowed.length ? allowed.join(", ") : "none"}), so the task could reach devices outside it`
        : null;
    }
    case "devices": {
      if (!task.deviceIds.length) return null;
      const [row] = await db
        .select({ n: count() })
        .from(devices)
        .where(and(inArray(devices.id, task.deviceIds), not(deviceScopeCondition(scope)!)));
      return row?.n ? "the task reaches devices outside your role's scope" : null;
    }
  }
}
