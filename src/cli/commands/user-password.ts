import { eq } from "drizzle-orm";
import { generatePassword, hashPassword } from "../../platform/auth/passwords.ts";
import { endUserSessions } from "../../platform/auth/sessions.ts";
import { nameKey } from "../../db/name-key.ts";
import { users } from "../../db/schema/index.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { CliError, defineCommand } from "../command.ts";
import { MIN_PASSWORD_LENGTH } from "../../kernel/password-rule.ts";
import { passwordFromStdin } from "./user-create.ts";

/**
 * The way back in when a password is lost (admin's first one included: it is printed once, on the first start).
 * Like a password change through the API, it ends the user's web sessions and is recorded in the activity log.
 */
export const userPasswordCommand = defineCommand({
  summary: "Set a user's password, read from stdin or generated and printed once; ends their web sessions",
  options: {
    username: { type: "string", placeholder: "name", required: true, description: "the user's login name" },
    "password-stdin": {
      type: "boolean",
      description: `read the password (at least ${MIN_PASSWORD_LENGTH} characters) from stdin instead of generating one`,
    },
  },
  async run(flags, { db, clock, io }) {
    const generated = flags["password-stdin"] ? undefined : generatePassword();
    const password = generated ?? (await passwordFromStdin(io.readStdin));
    // Hashing takes a fifth of a second: done before the transaction so no write waits on it.
    const passwordHash = await hashPassword(password);
    const now = clock.now();
    const changed = await db.transaction(async (tx) => {
      const [user] = await tx
        .select({ id: users.id })
        .from(users)
        .where(eq(users.usernameKey, nameKey(flags.username)));
      if (!user) return false;
      await tx.update(users).set({ passwordHash, updatedAt: now }).where(eq(users.id, user.id));
      await endUserSessions(tx, [user.id]);
      await recordActivity(
        tx,
        { system: "svc user:password" },
        { action: "user.password_change", subjectType: "user", subjectId: user.id },
        now,
      );
      return true;
    });
    if (!changed)
      throw new CliError(`no user is named '${flags.username}'; give the login name exactly as it was created`);
    io.print(`Set the password of '${flags.username}'; their web sessions have ended.`);
    if (generated) {
      // Shown this once, on the console only: it is stored as a hash.
      io.print("Generated password, shown only now:");
      io.print(generated);
    }
  },
});
