import { and, count, eq, inArray, notInArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { roles, users } from "../../db/schema/index.ts";
import { ADMIN_ROLE } from "../../platform/auth/roles.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { actorGrant, assertWithin, grantOf } from "../roles/index.ts";

type UserRow = typeof users.$inferSelect;
type RoleRow = typeof roles.$inferSelect;

export { ADMIN_ROLE };

export async function builtinAdminRoleId(db: DbOrTx): Promise<number | undefined> {
  const [row] = await db
    .select({ id: roles.id })
    .from(roles)
    .where(and(eq(roles.builtin, true), eq(roles.nameKey, nameKey(ADMIN_ROLE))));
  return row?.id;
}

/** A user cannot lock themselves out: disabling or deleting one's own account is refused. */
export function assertNotSelf(auth: AuthContext, ids: number[], verb: "disable" | "delete"): void {
  if (ids.includes(auth.userId))
    throw ApiError.conflict(`You cannot ${verb} your own user (${auth.username}); ask another administrator`);
}

/**
 * Refuses a change that would leave nobody enabled in the built-in admin role, since only an admin can undo it.
 * `leaving` are users about to stop being enabled admins (deleted, disabled or given another role).
 */
export async function assertAdminRemains(db: DbOrTx, leaving: UserRow[], remedy: string): Promise<void> {
  const adminRoleId = await builtinAdminRoleId(db);
  const leavingAdmins = leaving.filter((u) => u.enabled && u.roleId === adminRoleId);
  if (!leavingAdmins.length || adminRoleId === undefined) return;
  const [row] = await db
    .select({ n: count() })
    .from(users)
    .where(
      and(
        eq(users.roleId, adminRoleId),
        eq(users.enabled, true),
        notInArray(
          users.id,
          leaving.map((u) => u.id),
        ),
      ),
    );
  if ((row?.n ?? 0) === 0) {
    throw ApiError.conflict(`User '${leavingAdmins[0]!.username}' is the last enabled admin; ${remedy}`);
  }
}

/** A caller may only manage users whose role grants nothing beyond their own (else one could take over an admin). */
export async function assertCanManage(db: DbOrTx, auth: AuthContext, targets: UserRow[], verb: string): Promise<void> {
  if (!targets.length) return;
  const actor = await actorGrant(db, auth);
  const roleRows = await db
    .select()
    .from(roles)
    .where(inArray(roles.id, [...new Set(targets.map((u) => u.roleId))]));
  const byId = new Map<number, RoleRow>(roleRows.map((r) => [r.id, r]));
  for (const user of targets) {
    const role = byId.get(user.roleId)!;
    assertWithin(
      actor,
      grantOf(role),
      (lacks) =>
        `You cannot ${verb} user '${user.username}': their role '${role.name}' grants more than you hold (${lacks})`,
    );
  }
}
