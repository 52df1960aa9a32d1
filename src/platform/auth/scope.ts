import { and, inArray, notInArray, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { deviceTags, devices, roles, zoneTags } from "../../db/schema/index.ts";
import { ApiError } from "../http/errors.ts";

/** Which devices a role may see: every one, or those carrying any of the tags or in any of the categories. */
export type DeviceScope = { all: true } | { all: false; tagIds: number[]; categoryIds: number[] };

/**
 * The WHERE condition that limits a devices query to the scope; undefined when nothing is hidden. A device carries
 * its own tags and its zone's (zone_tags), so a role scoped to a tag sees the devices of every zone carrying it.
 */
export function deviceScopeCondition(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  const parts: SQL[] = [];
  if (scope.tagIds.length) {
    parts.push(
      inArray(
        devices.id,
        sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, scope.tagIds)})`,
      ),
      inArray(
        devices.zoneId,
        sql`(select ${zoneTags.zoneId} from ${zoneTags} where ${inArray(zoneTags.tagId, scope.tagIds)})`,
      ),
    );
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
 * The devices a shared object reaches (a credential set, template, category, command, snippet, policy, ...): a
 * condition on `devices` selecting them today, or EVERY_DEVICE for an object that reaches every device there is
 * or will be (a global compare exclusion, the settings).
 */
export type DeviceReach = SQL | typeof EVERY_DEVICE;
export const EVERY_DEVICE = "every device";

/** Whether the scope covers every device the reach holds today (EVERY_DEVICE: only an unscoped role's does). */
export async function reachesOnlyScope(db: DbOrTx, scope: DeviceScope, reach: DeviceReach): Promise<boolean> {
  if (scope.all) return true;
  if (reach === EVERY_DEVICE) return false;
  const [outside] = await db
    .select({ id: devices.id })
    .from(devices)
    .where(
      and(
        reach,
        notInArray(devices.id, sql`(select ${devices.id} from ${devices} where ${deviceScopeCondition(scope)})`),
      ),
    )
    .limit(1);
  return !outside;
}

/**
 * The one rule for shared objects: changing, deleting or creating one changes what is done to every device it
 * reaches, so a caller may do it only when their scope covers all of them (403 otherwise; the refusal cannot
 * hide that other devices exist, but does not say which or how many). `what` names the object ("Snippet 8").
 */
export async function refuseUnlessScopeCovers(
  db: DbOrTx,
  scope: DeviceScope,
  what: string,
  reach: DeviceReach,
): Promise<void> {
  if (await reachesOnlyScope(db, scope, reach)) return;
  throw new ApiError(
    403,
    reach === EVERY_DEVICE
      ? `${what} reaches every device, including devices outside your role's scope: only a user whose role sees all devices can create, change or delete it`
      : `${what} reaches devices outside your role's scope: only a user whose scope covers every device it reaches can create, change or delete it`,
  );
}

/**
 * Whether a device with these tags (its own and its zone's) and category falls inside the scope (checked before a
 * write lands).
 */
export function isInScope(scope: DeviceScope, device: { tagIds: number[]; categoryId: number | null }): boolean {
  if (scope.all) return true;
  return (
    device.tagIds.some((t) => scope.tagIds.includes(t)) ||
    (device.categoryId !== null && scope.categoryIds.includes(device.categoryId))
  );
}

/**
 * Deleting a tag or category that a role's scope names would silently change who sees which devices: refuse
 * with 409 naming the roles, so the admin changes the scope first.
 */
export async function refuseIfScopingRoles(db: DbOrTx, kind: "tag" | "category", ids: number[]): Promise<void> {
  const rows = await db
    .select({ name: roles.name, tagIds: roles.scopeTagIds, categoryIds: roles.scopeCategoryIds })
    .from(roles);
  const scoping = rows.filter((r) => (kind === "tag" ? r.tagIds : r.categoryIds).some((id) => ids.includes(id)));
  if (scoping.length) {
    throw ApiError.conflict(
      `The ${kind} scopes role${scoping.length === 1 ? "" : "s"} ${scoping.map((r) => `'${r.name}'`).join(", ")}; change the role's scope first`,
    );
  }
}
