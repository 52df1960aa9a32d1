import { eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { apiTokens, users } from "../../db/schema/index.ts";
import { recordEvent } from "../outbox/record.ts";
import { recordActivity, type Actor } from "../audit/record.ts";
import type { Ability } from "./abilities.ts";
import { getSettings } from "../settings/service.ts";
import { issueToken, revokeToken } from "./tokens.ts";

const usernameOf = async (tx: DbOrTx, userId: number) =>
  (await tx.select({ username: users.username }).from(users).where(eq(users.id, userId)))[0]?.username ?? "";

/**
 * Issuing and revoking a token with its activity entry in one transaction: the web settings page and the `svc`
 * console both go through here, so a token never appears or goes without the audit trail saying who did it.
 */
export async function issueTokenRecorded(
  db: Db,
  actor: Actor,
  input: { userId: number; name: string; abilities: Ability[]; expiresAt?: Date | null },
  now: Date,
): Promise<{ id: number; value: string; expiresAt: Date | null }> {
  return db.transaction(async (tx) => {
    // No date given (undefined, not null): the settings' default lifetime, if there is one.
    const days = input.expiresAt === undefined ? (await getSettings(tx)).settings.tokens.default_expiry_days : null;
    if (days !== null) input = { ...input, expiresAt: new Date(now.getTime() + days * 86_400_000) };
    const issued = await issueToken(tx, input, now);
    await recordEvent(
      tx,
      "token.created",
      {
        token_id: issued.id,
        token_name: input.name,
        user_id: input.userId,
        username: await usernameOf(tx, input.userId),
        abilities: input.abilities,
        expires_at: input.expiresAt?.toISOString() ?? null,
      },
      now,
    );
    await recordActivity(
      tx,
      actor,
      {
        action: "api_token.create",
        subjectType: "api_token",
        subjectId: issued.id,
        before: null,
        after: { id: issued.id, name: input.name, user_id: input.userId, abilities: input.abilities },
      },
      now,
    );
    return { ...issued, expiresAt: input.expiresAt ?? null };
  });
}

/** Revokes an active token and records it; false (and no entry) when no active token has that id. */
export async function revokeTokenRecorded(db: Db, actor: Actor, id: number, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [token] = await tx
      .select({ name: apiTokens.name, userId: apiTokens.userId })
      .from(apiTokens)
      .where(eq(apiTokens.id, id));
    if (!token || !(await revokeToken(tx, id, now))) return false;
    await recordEvent(
      tx,
      "token.revoked",
      { token_id: id, token_name: token.name, user_id: token.userId, username: await usernameOf(tx, token.userId) },
      now,
    );
    await recordActivity(
      tx,
      actor,
      {
        action: "api_token.revoke",
        subjectType: "api_token",
        subjectId: id,
        before: { id, name: token.name, revoked: false },
        after: { id, name: token.name, revoked: true },
      },
      now,
    );
    return true;
  });
}
