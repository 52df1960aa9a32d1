import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { removeSecondFactor } from "../../platform/auth/mfa/second-factor.ts";
import { hashPassword } from "../../platform/auth/passwords.ts";
import { endUserSessions } from "../../platform/auth/sessions.ts";
import type { DbOrTx } from "../../db/client.ts";
import { users } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { assertAdminRemains, assertCanManage, assertNotSelf } from "./guards.ts";
import { showUser } from "./resource.ts";

async function findUser(tx: DbOrTx, id: number) {
  const [user] = await tx.select().from(users).where(eq(users.id, id));
  if (!user) throw ApiError.notFound(`User ${id}`);
  return user;
}

/** Enabling or disabling an account; an unchanged state is answered without an audit entry. */
export function setUserEnabled(c: Context<AppEnv>, id: number, enabled: boolean) {
  const { auth } = c.var;
  const now = c.var.services.clock.now();
  return c.var.services.db.transaction(async (tx) => {
    const user = await findUser(tx, id);
    if (!enabled) assertNotSelf(auth, [id], "disable");
    await assertCanManage(tx, auth, [user], enabled ? "enable" : "disable");
    if (user.enabled === enabled) return showUser(tx, id);
    if (!enabled) await assertAdminRemains(tx, [user], "enable or create another admin first");
    const before = await showUser(tx, id);
    await tx.update(users).set({ enabled, updatedAt: now }).where(eq(users.id, id));
    if (!enabled) await endUserSessions(tx, [id]);
    const after = await showUser(tx, id);
    await recordActivity(
      tx,
      auth,
      { action: enabled ? "user.enable" : "user.disable", subjectType: "user", subjectId: id, before, after },
      now,
    );
    return after;
  });
}

export async function changePassword(c: Context<AppEnv>, id: number, password: string): Promise<string> {
  const { auth } = c.var;
  const now = c.var.services.clock.now();
  // Hashing takes a fifth of a second: done before the transaction so no write waits on it.
  const passwordHash = await hashPassword(password);
  return c.var.services.db.transaction(async (tx) => {
    const user = await findUser(tx, id);
    await assertCanManage(tx, auth, [user], "change the password of");
    await tx.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, id));
    await endUserSessions(tx, [id]);
    await recordActivity(tx, auth, { action: "user.password_change", subjectType: "user", subjectId: id }, now);
    return user.username;
  });
}

/** An administrator removes a user's second factor (a lost phone); returns the username. */
export async function resetSecondFactor(c: Context<AppEnv>, id: number): Promise<string> {
  const { auth } = c.var;
  const { db, clock } = c.var.services;
  const user = await findUser(db, id);
  await assertCanManage(db, auth, [user], "reset the second factor of");
  if (!(await removeSecondFactor(db, auth, id, "reset", clock.now())))
    throw ApiError.conflict(`User '${user.username}' has no second factor`);
  return user.username;
}
