import { and, eq, gt, isNull, lte } from "drizzle-orm";
import type { Clock } from "../../kernel/clock.ts";
import type { Db } from "../../db/client.ts";
import { apiTokens, users } from "../../db/schema/index.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import type { Logger } from "../../kernel/logger.ts";
import { recordEvent } from "../outbox/record.ts";
import { getSettings } from "../settings/service.ts";

export const EXPIRY_CHECK_INTERVAL_MS = 60 * 60_000;

/**
 * Sends `token.expiring` for every active token that expires within the settings' warning window and has not
 * been warned about. Each token is claimed by a conditional update in the transaction that writes its event, so
 * API replicas running this at once send each warning exactly once. Returns how many went out.
 */
export async function warnExpiringTokens(db: Db, now: Date): Promise<number> {
  const days = (await getSettings(db)).settings.tokens.expiry_warning_days;
  const horizon = new Date(now.getTime() + days * 86_400_000);
  const due = await db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      userId: apiTokens.userId,
      username: users.username,
      expiresAt: apiTokens.expiresAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(
      and(
        isNull(apiTokens.revokedAt),
        isNull(apiTokens.expiryWarnedAt),
        gt(apiTokens.expiresAt, now),
        lte(apiTokens.expiresAt, horizon),
      ),
    );
  let sent = 0;
  for (const token of due) {
    await db.transaction(async (tx) => {
      const claimed = await tx
        .update(apiTokens)
        .set({ expiryWarnedAt: now })
        .where(and(eq(apiTokens.id, token.id), isNull(apiTokens.expiryWarnedAt)))
        .returning({ id: apiTokens.id });
      if (!claimed.length) return;
      await recordEvent(
        tx,
        "token.expiring",
        {
          token_id: token.id,
          token_name: token.name,
          user_id: token.userId,
          username: token.username,
          expires_at: token.expiresAt!.toISOString(),
        },
        now,
      );
      sent++;
    });
  }
  return sent;
}

/** Looks for tokens due a warning every hour in the API process (and once shortly after the start). */
export function startTokenExpiryWarnings(
  deps: { db: Db; clock: Clock; logger: Logger },
  intervalMs = EXPIRY_CHECK_INTERVAL_MS,
) {
  const pass = () =>
    warnExpiringTokens(deps.db, deps.clock.now())
      .then((sent) => {
        if (sent) deps.logger.info("warned of expiring API tokens", { tokens: sent });
      })
      .catch((err) => deps.logger.error("expiring API tokens could not be checked", { error: failureReason(err) }));
  const first = setTimeout(pass, 15_000);
  const timer = setInterval(pass, intervalMs);
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
