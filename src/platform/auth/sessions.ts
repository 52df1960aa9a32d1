import { and, desc, eq, gt, inArray, lte, ne } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { roles, users, webSessions } from "../../db/schema/index.ts";
import { ADMIN_ROLE } from "./roles.ts";
import { hashTokenValue, randomSecret } from "./token-value.ts";

export type WebSession = {
  sessionId: number;
  userId: number;
  username: string;
  roleName: string;
  /** Holder of the built-in admin role: the only users the settings pages serve. */
  isAdmin: boolean;
  /** The synchronizer token every form of this session carries. */
  csrfToken: string;
  /** For a directory or single sign-on user: where their groups come from and when they were last read (see external-grants.ts). */
  directory: { source: "ldap" | "oidc"; checkedAt: Date | null } | null;
};

/**
 * The CSRF token is derived from the session value, so it needs no column and dies with the session; it is a
 * different hash from the stored one, so a copy of the database yields neither.
 */
export const csrfTokenFor = (sessionValue: string) => hashTokenValue(`csrf:${sessionValue}`);

/** How long a password-proven sign-in waits for its second factor. */
export const SECOND_FACTOR_WINDOW_MS = 5 * 60_000;

/**
 * Starts a session for a user who has just proved their password (and second factor, unless
 * `secondFactorPending`: then it opens only the second-factor page, for SECOND_FACTOR_WINDOW_MS); returns the
 * cookie value.
 */
export async function createSession(
  db: Db,
  input: {
    userId: number;
    ip: string;
    userAgent: string | undefined;
    lifetimeMs: number;
    secondFactorPending?: boolean;
  },
  now: Date,
): Promise<string> {
  const value = randomSecret();
  // Logins are rare, so this is where ended sessions are swept away.
  await db.delete(webSessions).where(lte(webSessions.expiresAt, now));
  await db.insert(webSessions).values({
    sessionHash: await hashTokenValue(value),
    userId: input.userId,
    ip: input.ip,
    userAgent: input.userAgent?.slice(0, 255) ?? null,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + (input.secondFactorPending ? SECOND_FACTOR_WINDOW_MS : input.lifetimeMs)),
    secondFactorPending: input.secondFactorPending ?? false,
  });
  if (!input.secondFactorPending) await db.update(users).set({ lastLoginAt: now }).where(eq(users.id, input.userId));
  return value;
}

/**
 * The session behind a cookie value, or null when it is unknown, expired, or its user is disabled. A live
 * session's expiry slides forward, written at most once a minute.
 */
export async function resolveSession(
  db: Db,
  value: string,
  now: Date,
  lifetimeMs: number,
  pending = false,
): Promise<WebSession | null> {
  const [row] = await db
    .select({
      sessionId: webSessions.id,
      expiresAt: webSessions.expiresAt,
      lastSeenAt: webSessions.lastSeenAt,
      userId: users.id,
      username: users.username,
      roleName: roles.name,
      roleBuiltin: roles.builtin,
      authSource: users.authSource,
      directoryCheckedAt: users.directoryCheckedAt,
    })
    .from(webSessions)
    .innerJoin(users, eq(users.id, webSessions.userId))
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(
      and(
        eq(webSessions.sessionHash, await hashTokenValue(value)),
        eq(users.enabled, true),
        eq(webSessions.secondFactorPending, pending),
      ),
    )
    .limit(1);
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  // A sign-in waiting for its second factor keeps its short window; it does not slide.
  if (!pending && now.getTime() - row.lastSeenAt.getTime() >= 60_000) {
    await db
      .update(webSessions)
      .set({ lastSeenAt: now, expiresAt: new Date(now.getTime() + lifetimeMs) })
      .where(eq(webSessions.id, row.sessionId));
  }
  return {
    sessionId: row.sessionId,
    userId: row.userId,
    username: row.username,
    roleName: row.roleName,
    isAdmin: row.roleBuiltin && row.roleName.toLowerCase() === ADMIN_ROLE,
    csrfToken: await csrfTokenFor(value),
    directory: row.authSource === "local" ? null : { source: row.authSource, checkedAt: row.directoryCheckedAt },
  };
}

export async function endSession(db: Db, sessionId: number): Promise<void> {
  await db.delete(webSessions).where(eq(webSessions.id, sessionId));
}

/**
 * Ends every web session of these users: called inside the transaction that disables or deletes them or changes
 * their password, so a session opened with the old state never outlives it (re-enabling brings none back).
 */
export async function endUserSessions(db: DbOrTx, userIds: number[]): Promise<void> {
  if (userIds.length) await db.delete(webSessions).where(inArray(webSessions.userId, userIds));
}

export type SessionSummary = {
  id: number;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  lastSeenAt: Date;
};

/** A user's live, fully signed-in sessions, most recently used first: what "your sessions" shows. */
export async function listUserSessions(db: DbOrTx, userId: number, now: Date): Promise<SessionSummary[]> {
  return db
    .select({
      id: webSessions.id,
      ip: webSessions.ip,
      userAgent: webSessions.userAgent,
      createdAt: webSessions.createdAt,
      lastSeenAt: webSessions.lastSeenAt,
    })
    .from(webSessions)
    .where(
      and(eq(webSessions.userId, userId), gt(webSessions.expiresAt, now), eq(webSessions.secondFactorPending, false)),
    )
    .orderBy(desc(webSessions.lastSeenAt), desc(webSessions.id));
}

/** Ends one of the user's own sessions; false when they have none with that id (another user's included). */
export async function endOwnSession(db: DbOrTx, userId: number, sessionId: number): Promise<boolean> {
  const ended = await db
    .delete(webSessions)
    .where(and(eq(webSessions.id, sessionId), eq(webSessions.userId, userId)))
    .returning({ id: webSessions.id });
  return ended.length > 0;
}

/** Ends every session of the user but `keep` (the one making the request); returns how many ended. */
export async function endOtherSessions(db: DbOrTx, userId: number, keep: number): Promise<number> {
  const ended = await db
    .delete(webSessions)
    .where(and(eq(webSessions.userId, userId), ne(webSessions.id, keep)))
    .returning({ id: webSessions.id });
  return ended.length;
}
