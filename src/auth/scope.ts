import { inArray, or, sql, type SQL } from "drizzle-orm";
import { deviceTags, devices } from "../db/schema/index.ts";

/** Which devices a role may see: every one, or those carrying any of the tags or in any of the categories. */
export type DeviceScope = { all: true } | { all: false; tagIds: number[]; categoryIds: number[] };

/** The WHERE condition that limits a devices query to the scope; undefined when nothing is hidden. */
export function deviceScopeCondition(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  const parts: SQL[] = [];
  if (scope.tagIds.length) {
    parts.push(inArray(devices.id, sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, scope.tagIds)})`));
  }
  if (scope.categoryIds.length) parts.push(inArray(devices.categoryId, scope.categoryIds));
  return parts.length ? or(...parts) : sql`0`;
}

/** Whether a device with these tags and category falls inside the scope (checked before a write lands). */
export function isInScope(scope: DeviceScope, device: { tagIds: number[]; categoryId: number | null }): boolean {
  if (scope.all) return true;
  return device.tagIds.some((t) => scope.tagIds.includes(t)) ||
    (device.categoryId !== null && scope.categoryIds.includes(device.categoryId));
}
