import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { roles } from "../../db/schema/index.ts";
import { type Ability, isAbility } from "./abilities.ts";
import type { DeviceScope } from "./scope.ts";

/** What a role grants its holders now: its abilities and device scope. */
export type RoleGrant = { abilities: Set<Ability>; scope: DeviceScope };

/**
 * The grant of the role by this name, read per request so a role change applies at once. A role that is gone
 * grants no ability, so its scope (all) is never used.
 */
export async function roleGrant(db: DbOrTx, roleName: string): Promise<RoleGrant> {
  const [role] = await db.select().from(roles).where(eq(roles.name, roleName));
  return {
    abilities: new Set((role?.permissions ?? []).filter(isAbility)),
    scope:
      !role || role.scopeAll
        ? { all: true }
        : { all: false, tagIds: role.scopeTagIds, categoryIds: role.scopeCategoryIds },
  };
}
