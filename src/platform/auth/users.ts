import { count, eq, or } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { roles, users } from "../../db/schema/index.ts";

export class UserInputError extends Error {}

/** What a username may be, wherever a user is made, renamed, or logs in. */
export const USERNAME = { pattern: /^[A-Za-z0-9._-]{3,64}$/, rule: "must be 3-64 letters, digits, '.', '_' or '-'" };

/** Creates a user under an existing role; the caller hashes the password (see passwords.ts). */
export async function createUser(
  db: DbOrTx,
  input: { username: string; email: string; roleName: string; passwordHash: string },
  now: Date,
): Promise<{ id: number }> {
  if (!USERNAME.pattern.test(input.username)) throw new UserInputError(`username ${USERNAME.rule}`);
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email))
    throw new UserInputError(`email '${input.email}' is not an email address`);
  const [role] = await db
    .select({ id: roles.id })
    .from(roles)
    .where(eq(roles.nameKey, nameKey(input.roleName)));
  if (!role) {
    const names = (await db.select({ name: roles.name }).from(roles).orderBy(roles.id)).map((r) => r.name);
    throw new UserInputError(`role '${input.roleName}' does not exist; use one of: ${names.join(", ")}`);
  }
  const clash = await db
    .select({ username: users.username })
    .from(users)
    .where(or(eq(users.usernameKey, nameKey(input.username)), eq(users.emailKey, nameKey(input.email))));
  if (clash.length)
    throw new UserInputError(`a user with username '${input.username}' or email '${input.email}' already exists`);
  const [row] = await db
    .insert(users)
    .values({
      username: input.username,
      usernameKey: nameKey(input.username),
      email: input.email,
      emailKey: nameKey(input.email),
      roleId: role.id,
      passwordHash: input.passwordHash,
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: users.id });
  return row!;
}

export async function findUserByName(db: Db, username: string) {
  const [row] = await db
    .select()
    .from(users)
    .where(eq(users.usernameKey, nameKey(username)));
  return row;
}

export async function countUsers(db: DbOrTx): Promise<number> {
  const [row] = await db.select({ n: count() }).from(users);
  return row?.n ?? 0;
}

/** Where a user's password is checked (local, ldap, oidc); undefined for a user that is gone. */
export async function authSourceOf(db: DbOrTx, userId: number) {
  const [row] = await db.select({ authSource: users.authSource }).from(users).where(eq(users.id, userId));
  return row?.authSource;
}
