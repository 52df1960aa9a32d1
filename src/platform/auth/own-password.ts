import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { users } from "../../db/schema/index.ts";
import { recordActivity, type Actor } from "../audit/record.ts";
import { Password } from "./passwords.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import { endOtherSessions } from "./sessions.ts";

export type OwnPasswordChange =
  | { ok: true; endedSessions: number }
  | { ok: false; status: 401 | 409 | 422; message: string };

/**
 * A user changes their own password: the current one proves it is them (a session left open is not enough),
 * the new one follows the same rule as everywhere, and every other session of theirs ends in the same
 * transaction, so whoever else held one must sign in with the new password.
 */
export async function changeOwnPassword(
  db: Db,
  actor: Actor,
  input: { userId: number; sessionId: number; current: string; next: string; repeated: string },
  now: Date,
): Promise<OwnPasswordChange> {
  const [user] = await db.select().from(users).where(eq(users.id, input.userId));
  if (!user || user.authSource !== "local")
    return { ok: false, status: 409, message: "Your password is the directory's: change it there." };
  if (!(await verifyPassword(input.current, user.passwordHash)))
    return { ok: false, status: 401, message: "The current password is wrong; nothing was changed." };
  const rule = Password.safeParse(input.next);
  if (!rule.success) return { ok: false, status: 422, message: `The new password ${rule.error.issues[0]!.message}.` };
  if (input.next !== input.repeated)
    return { ok: false, status: 422, message: "The new password and its repetition differ." };
  if (input.next === input.current)
    return { ok: false, status: 422, message: "The new password is the current one: choose another." };
  const passwordHash = await hashPassword(input.next);
  return db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, input.userId));
    const endedSessions = await endOtherSessions(tx, input.userId, input.sessionId);
    await recordActivity(
      tx,
      actor,
      {
        action: "user.password_change",
        subjectType: "user",
        subjectId: input.userId,
        after: { other_sessions_ended: endedSessions },
      },
      now,
    );
    return { ok: true, endedSessions } as const;
  });
}
