import { desc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { apiTokens, users } from "../../db/schema/index.ts";

/** Who is looking: administrators see and revoke every user's tokens, everyone else only their own. */
export type TokenViewer = { userId: number; isAdmin: boolean };

/** The tokens a viewer may see, newest first; never a value (only its display prefix is kept). */
export function visibleTokens(db: DbOrTx, viewer: TokenViewer) {
  const query = db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.tokenPrefix,
      userId: apiTokens.userId,
      owner: users.username,
      abilities: apiTokens.abilities,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      expiresAt: apiTokens.expiresAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId));
  return (viewer.isAdmin ? query : query.where(eq(apiTokens.userId, viewer.userId))).orderBy(desc(apiTokens.id));
}

/** A token the viewer may revoke (their own, or any for an administrator); undefined otherwise, as if it did not exist. */
export async function revocableToken(db: DbOrTx, viewer: TokenViewer, id: number) {
  const [row] = await db
    .select({ id: apiTokens.id, name: apiTokens.name, userId: apiTokens.userId })
    .from(apiTokens)
    .where(eq(apiTokens.id, id));
  return row && (viewer.isAdmin || row.userId === viewer.userId) ? row : undefined;
}
