import { inArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { deviceTags, devices, roles } from "../db/schema/index.ts";
import { ApiError } from "../http/errors.ts";
import { plural } from "../words.ts";

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

/**
 * The condition that a device-id column names a device inside the scope (for tables that refer to devices);
 * undefined when nothing is hidden.
 */
export function deviceIdInScope(column: SQLWrapper, scope: DeviceScope): SQL | undefined {
  const inScope = deviceScopeCondition(scope);
  return inScope ? inArray(column, sql`(select ${devices.id} from ${devices} where ${inScope})`) : undefined;
}

/**
 * "3 devices" in a message to a caller with a scope: the devices inside it are counted, those outside it are
 * only said to exist (a refusal cannot hide that they do, but need not say how many there are).
 */
export function devicesPhrase(inScope: number, total: number): string {
  if (inScope === total) return plural(total, "device");
  if (inScope === 0) return "devices outside your role's scope";
  return `${plural(inScope, "device")} and others outside your role's scope`;
}

/**
 * Deleting a record devices refer to without blocking the delete (a tag, a device profile) changes those devices:
 * a caller may do that only to devices in their scope, so one that is also used outside it is refused (409).
 */
export function refuseIfUsedBeyondScope(what: string, inScope: number, total: number): void {
  if (inScope < total) throw ApiError.conflict(`${what} is also used by devices outside your role's scope; ask a user who sees them all to delete it`);
}

/** Whether a device with these tags and category falls inside the scope (checked before a write lands). */
export function isInScope(scope: DeviceScope, device: { tagIds: number[]; categoryId: number | null }): boolean {
  if (scope.all) return true;
  return device.tagIds.some((t) => scope.tagIds.includes(t)) ||
    (device.categoryId !== null && scope.categoryIds.includes(device.categoryId));
}

/**
 * Deleting a tag or category that a role's scope names would silently change who sees which devices: refuse
 * with 409 naming the roles, so the admin changes the scope first.
 */
export async function refuseIfScopingRoles(db: DbOrTx, kind: "tag" | "category", ids: number[]): Promise<void> {
  const rows = await db.select({ name: roles.name, tagIds: roles.scopeTagIds, categoryIds: roles.scopeCategoryIds }).from(roles);
  const scoping = rows.filter((r) => (kind === "tag" ? r.tagIds : r.categoryIds).some((id) => ids.includes(id)));
  if (scoping.length) {
    throw ApiError.conflict(`The ${kind} scopes role${scoping.length === 1 ? "" : "s"} ${scoping.map((r) => `'${r.name}'`).join(", ")}; change the role's scope first`);
  }
}
