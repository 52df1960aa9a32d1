import { inArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { deviceTags, devices, roles } from "../db/schema/index.ts";
import { ApiError } from "../http/errors.ts";

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
 * Changing or deleting a record devices use (a tag, category, vendor, template, credential set or profile)
 * changes those devices, or what is done to them: a caller may do that only when all of them are in their scope
 * (403 otherwise; the refusal cannot hide that other devices exist, but does not say how many).
 */
export function refuseIfUsedBeyondScope(what: string, inScope: number, total: number): void {
  if (inScope < total) {
    throw new ApiError(403, `${what} is also used by devices outside your role's scope: only a user who sees all of them can change or delete it`);
  }
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
