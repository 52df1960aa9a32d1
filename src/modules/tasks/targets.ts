import { and, inArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../auth/scope.ts";
import { deviceTags, devices, taskRunItems, tasks, type TaskType } from "../../db/schema/index.ts";
import { TASK_TYPE_DEFS, type TargetKind } from "./types.ts";

type TargetLists = { devices: SQLWrapper; categories: SQLWrapper; tags: SQLWrapper };

const idsIn = (list: SQLWrapper) => sql`(select value from json_each(${list}))`;

const noneListed = (lists: TargetLists) =>
  sql`json_array_length(${lists.devices}) = 0 and json_array_length(${lists.categories}) = 0 and json_array_length(${lists.tags}) = 0`;

/**
 * The condition on `devices` that selects what a target kind reaches, given its id lists as JSON (task targets,
 * and the scopes of compliance policy assignments).
 */
export function reachedBy(kind: TargetKind, lists: TargetLists): SQL {
  switch (kind) {
    case "devices":
      return inArray(devices.id, idsIn(lists.devices));
    case "categories":
      return inArray(devices.categoryId, idsIn(lists.categories));
    case "tags":
      return inArray(devices.id, sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, idsIn(lists.tags))})`);
    case "all":
      return sql`1`;
    case "none":
      return sql`0`;
    case "lists":
      return sql`(${or(reachedBy("devices", lists), reachedBy("categories", lists), reachedBy("tags", lists), noneListed(lists))})`;
  }
}

/** The devices one task reaches right now (deleted ids simply match nothing). */
export function taskTargetCondition(task: { type: TaskType; deviceIds: number[]; categoryIds: number[]; tagIds: number[] }): SQL {
  return reachedBy(TASK_TYPE_DEFS[task.type].targets, {
    devices: sql`${JSON.stringify(task.deviceIds)}`,
    categories: sql`${JSON.stringify(task.categoryIds)}`,
    tags: sql`${JSON.stringify(task.tagIds)}`,
  });
}

/** The ids of the devices inside the scope, as a subquery. */
export const inScopeDeviceIds = (scope: DeviceScope) => sql`(select ${devices.id} from ${devices} where ${deviceScopeCondition(scope)})`;

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
