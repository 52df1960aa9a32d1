import { inArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { deviceTags, devices } from "../../db/schema/index.ts";

/** How a set of devices is chosen: by id, category or tag lists, all of them, none, or any of the three lists. */
export type DeviceSelection = "devices" | "categories" | "tags" | "all" | "none" | "lists";

export type TargetLists = { devices: SQLWrapper; categories: SQLWrapper; tags: SQLWrapper };

const idsIn = (list: SQLWrapper) => sql`(select value from json_each(${list}))`;

const noneListed = (lists: TargetLists) =>
  sql`json_array_length(${lists.devices}) = 0 and json_array_length(${lists.categories}) = 0 and json_array_length(${lists.tags}) = 0`;

/**
 * The condition on `devices` that selects what a target kind reaches, given its id lists as JSON (task targets,
 * and the scopes of compliance policy assignments).
 */
export function reachedBy(kind: DeviceSelection, lists: TargetLists): SQL {
  switch (kind) {
    case "devices":
      return inArray(devices.id, idsIn(lists.devices));
    case "categories":
      return inArray(devices.categoryId, idsIn(lists.categories));
    case "tags":
      return inArray(
        devices.id,
        sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, idsIn(lists.tags))})`,
      );
    case "all":
      return sql`1`;
    case "none":
      return sql`0`;
    case "lists":
      return sql`(${or(reachedBy("devices", lists), reachedBy("categories", lists), reachedBy("tags", lists), noneListed(lists))})`;
  }
}

/** The devices a selection's id lists reach right now (deleted ids simply match nothing). */
export function selectedDevices(
  kind: DeviceSelection,
  lists: { deviceIds: number[]; categoryIds: number[]; tagIds: number[] },
): SQL {
  return reachedBy(kind, {
    devices: sql`${JSON.stringify(lists.deviceIds)}`,
    categories: sql`${JSON.stringify(lists.categoryIds)}`,
    tags: sql`${JSON.stringify(lists.tagIds)}`,
  });
}
