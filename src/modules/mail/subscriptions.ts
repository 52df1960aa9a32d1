import { eq, inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Db, DbOrTx } from "../../db/client.ts";
import { mailSubscriptions, tags, users } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { assertCanManage } from "../users/index.ts";
import type { MailSubscriptionsPut } from "./routes.ts";

/** A user's mail subscriptions (all off until set). */
export async function showSubscriptions(db: DbOrTx, userId: number) {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId));
  if (!user) throw ApiError.notFound(`User ${userId}`);
  const [row] = await db.select().from(mailSubscriptions).where(eq(mailSubscriptions.userId, userId));
  return {
    user_id: userId,
    task_failures: row?.taskFailures ?? false,
    config_changes: row?.configChanges ?? false,
    config_change_tag_ids: row?.configChangeTagIds ?? [],
    compliance_failures: row?.complianceFailures ?? false,
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

/**
 * Sets a user's mail subscriptions (what the body leaves out is off). Another user's only for a caller who may
 * manage that user; recorded as `user.mail_subscriptions`.
 */
export async function setMailSubscriptions(
  { db, auth, now }: { db: Db; auth: AuthContext; now: Date },
  id: number,
  body: z.infer<typeof MailSubscriptionsPut>,
) {
  return db.transaction(async (tx) => {
    const before = await showSubscriptions(tx, id);
    // Another user's mail is theirs to silence only for a caller who may manage that user (the rule for editing
    // them): a scoped user cannot switch off an administrator's failure mail.
    if (id !== auth.userId) {
      const [target] = await tx.select().from(users).where(eq(users.id, id));
      await assertCanManage(tx, auth, [target!], "change the mail subscriptions of");
    }
    const tagIds = [...new Set(body.config_change_tag_ids ?? [])];
    if (tagIds.length) {
      const found = new Set(
        (await tx.select({ id: tags.id }).from(tags).where(inArray(tags.id, tagIds))).map((t) => t.id),
      );
      const missing = tagIds.filter((t) => !found.has(t));
      if (missing.length)
        throw ApiError.validation({
          config_change_tag_ids: [`config_change_tag_ids names no tag with id ${missing.join(", ")}`],
        });
    }
    const values = {
      taskFailures: body.task_failures ?? false,
      configChanges: body.config_changes ?? false,
      configChangeTagIds: tagIds,
      complianceFailures: body.compliance_failures ?? false,
      updatedAt: now,
    };
    await tx
      .insert(mailSubscriptions)
      .values({ userId: id, ...values })
      .onConflictDoUpdate({ target: mailSubscriptions.userId, set: values });
    const after = await showSubscriptions(tx, id);
    const { updated_at: _b, ...was } = before;
    const { updated_at: _a, ...is } = after;
    await recordActivity(
      tx,
      auth,
      { action: "user.mail_subscriptions", subjectType: "user", subjectId: id, before: was, after: is },
      now,
    );
    return after;
  });
}
