import { and, eq, isNull } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { apiTokens, roles, users } from "../../db/schema/index.ts";
import type { Ability } from "./abilities.ts";
import type { DeviceScope } from "./scope.ts";
import { displayPrefix, generateTokenValue, hashTokenValue } from "./token-value.ts";

export type ResolvedToken = {
  tokenId: number;
  tokenName: string;
  userId: number;
  username: string;
  roleName: string;
  abilities: Set<Ability>;
  scope: DeviceScope;
  lastUsedAt: Date | null;
  /** For a directory or single sign-on user: where their groups come from and when they were last read (see external-grants.ts). */
  directory: { source: "ldap" | "oidc"; checkedAt: Date | null } | null;
};

/**
 * Looks a presented token value up in one indexed query. Unknown, revoked and expired tokens, and tokens of
 * disabled users, all resolve to null: the caller answers 401 without saying which.
 */
export async function resolveToken(db: Db, value: string, now: Date): Promise<ResolvedToken | null> {
  const hash = await hashTokenValue(value);
  const [row] = await db
    .select({
      tokenId: apiTokens.id,
      tokenName: apiTokens.name,
      tokenAbilities: apiTokens.abilities,
      expiresAt: apiTokens.expiresAt,
      lastUsedAt: apiTokens.lastUsedAt,
      userId: users.id,
      username: users.username,
      roleName: roles.name,
      permissions: roles.permissions,
      scopeAll: roles.scopeAll,
      scopeTagIds: roles.scopeTagIds,
      scopeCategoryIds: roles.scopeCategoryIds,
      authSource: users.authSource,
      directoryCheckedAt: users.directoryCheckedAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(and(eq(apiTokens.tokenHash, hash), isNull(apiTokens.revokedAt), eq(users.enabled, true)))
    .limit(1);
  if (!row || (row.expiresAt && row.expiresAt.getTime() <= now.getTime())) return null;
  const permitted = new Set(row.permissions);
  return {
    tokenId: row.tokenId,
    tokenName: row.tokenName,
    userId: row.userId,
    username: row.username,
    roleName: row.roleName,
    abilities: new Set(row.tokenAbilities.filter((a) => permitted.has(a)) as Ability[]),
    scope: row.scopeAll ? { all: true } : { all: false, tagIds: row.scopeTagIds, categoryIds: row.scopeCategoryIds },
    lastUsedAt: row.lastUsedAt,
    directory: row.authSource === "local" ? null : { source: row.authSource, checkedAt: row.directoryCheckedAt },
  };
}

/** last_used_at is kept to the minute: a write per request would cost more than the answer it tracks. */
export async function touchToken(db: Db, token: ResolvedToken, now: Date): Promise<void> {
  if (token.lastUsedAt && now.getTime() - token.lastUsedAt.getTime() < 60_000) return;
  await db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, token.tokenId));
}

export async function issueToken(
  db: DbOrTx,
  input: { userId: number; name: string; abilities: Ability[]; expiresAt?: Date | null },
  now: Date,
): Promise<{ id: number; value: string }> {
  const value = generateTokenValue();
  const [row] = await db
    .insert(apiTokens)
    .values({
      userId: input.userId,
      name: input.name,
      tokenHash: await hashTokenValue(value),
      tokenPrefix: displayPrefix(value),
      abilities: input.abilities,
      createdAt: now,
      expiresAt: input.expiresAt ?? null,
    })
    .returning({ id: apiTokens.id });
  return { id: row!.id, value };
}

/** Returns false when no active token has that id. */
export async function revokeToken(db: DbOrTx, id: number, now: Date): Promise<boolean> {
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: now })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  return rows.length > 0;
}

export function tokenState(
  t: { revokedAt: Date | null; expiresAt: Date | null },
  now: Date,
): "active" | "revoked" | "expired" {
  if (t.revokedAt) return "revoked";
  if (t.expiresAt && t.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}
