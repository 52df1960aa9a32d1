import { eq } from "drizzle-orm";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { roles } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { AuthContext } from "../../platform/http/env.ts";

/** What a role hands to whoever holds it: abilities and the devices they may see. */
export type Grant = { permissions: readonly string[]; scope: DeviceScope };

type ScopeColumns = { scopeAll: boolean; scopeTagIds: number[]; scopeCategoryIds: number[] };

export const scopeOf = (role: ScopeColumns): DeviceScope =>
  role.scopeAll ? { all: true } : { all: false, tagIds: role.scopeTagIds, categoryIds: role.scopeCategoryIds };

export const grantOf = (role: ScopeColumns & { permissions: string[] }): Grant => ({
  permissions: role.permissions,
  scope: scopeOf(role),
});

/** The acting user's own grant: their role's permissions (not the token's subset) and their scope. */
export async function actorGrant(db: DbOrTx, auth: AuthContext): Promise<Grant & { roleName: string }> {
  const [role] = await db
    .select({ permissions: roles.permissions })
    .from(roles)
    .where(eq(roles.nameKey, nameKey(auth.roleName)));
  return { roleName: auth.roleName, permissions: role?.permissions ?? [], scope: auth.scope };
}

const scopeWithin = (outer: DeviceScope, inner: DeviceScope): boolean =>
  outer.all ||
  (!inner.all &&
    inner.tagIds.every((id) => outer.tagIds.includes(id)) &&
    inner.categoryIds.every((id) => outer.categoryIds.includes(id)));

/** What `target` grants that `actor` lacks, in words ("system.write", "devices outside your scope"); empty when within. */
export function excess(actor: Grant, target: Partial<Grant>): string[] {
  const own = new Set(actor.permissions);
  const missing = (target.permissions ?? []).filter((p) => !own.has(p));
  if (target.scope && !scopeWithin(actor.scope, target.scope)) missing.push("devices outside your scope");
  return missing;
}

/**
 * Nobody hands out more than they hold: a user may only give, create, change or remove grants within their own
 * role. Answered with 403 (not 422): the request is well formed, this caller is just not allowed to make it.
 */
export function assertWithin(
  actor: Grant & { roleName: string },
  target: Partial<Grant>,
  what: (lacks: string) => string,
): void {
  const lacks = excess(actor, target);
  if (lacks.length) throw new ApiError(403, what(`your role '${actor.roleName}' lacks ${lacks.join(", ")}`));
}
