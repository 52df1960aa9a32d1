import type { OpenAPIHono } from "@hono/zod-openapi";
import { eq, inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { mailSubscriptions, tags, users } from "../../db/schema/index.ts";
import type { AppEnv } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { failureReason } from "../../error-reason.ts";
import { recordActivity } from "../activity/record.ts";
import { getSettings } from "../settings/service.ts";
import { composeMail } from "./compose.ts";
import { assertCanManage } from "../users/guards.ts";
import { getMailSubscriptionsRoute, putMailSubscriptionsRoute, testMailRoute } from "./routes.ts";
import { MailNotConfiguredError, sendMail } from "./send.ts";

async function showSubscriptions(db: DbOrTx, userId: number) {
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

/** A user's mail subscriptions: in v1 and, as every user route, in v2. */
export function registerMailRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getMailSubscriptionsRoute, async (c) =>
    c.json({ data: await showSubscriptions(c.var.services.db, c.req.valid("param").id) }, 200),
  );

  app.openapi(putMailSubscriptionsRoute, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const now = c.var.services.clock.now();
    const data = await c.var.services.db.transaction(async (tx) => {
      const before = await showSubscriptions(tx, id);
      // Another user's mail is theirs to silence only for a caller who may manage that user (the rule for editing
      // them): a scoped user cannot switch off an administrator's failure mail.
      if (id !== c.var.auth.userId) {
        const [target] = await tx.select().from(users).where(eq(users.id, id));
        await assertCanManage(tx, c.var.auth, [target!], "change the mail subscriptions of");
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
        c.var.auth,
        { action: "user.mail_subscriptions", subjectType: "user", subjectId: id, before: was, after: is },
        now,
      );
      return after;
    });
    return c.json({ data }, 200);
  });
}

/** The SMTP test-send (v1 only, beside the settings it checks). */
export function registerMailTestRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(testMailRoute, async (c) => {
    const { db, secrets } = c.var.services;
    const { to } = c.req.valid("json");
    const { settings } = await getSettings(db);
    const message = composeMail([to], {
      subject: "[netkeep] Test message",
      intro: [
        `This is a test message from netkeep, sent by ${c.var.auth.username} to check the SMTP settings.`,
        "If you read this, mail works.",
      ],
    });
    try {
      await sendMail(db, secrets, message);
    } catch (err) {
      if (err instanceof MailNotConfiguredError) throw new ApiError(422, err.message);
      throw new ApiError(
        502,
        `The SMTP server ${settings.smtp.host}:${settings.smtp.port} did not take the message: ${failureReason(err).slice(0, 300)}`,
      );
    }
    return c.json({ message: `Sent a test message to ${to} through ${settings.smtp.host}:${settings.smtp.port}` }, 200);
  });
}
