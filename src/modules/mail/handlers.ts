import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { getSettings } from "../../platform/settings/service.ts";
import { composeMail } from "./compose.ts";
import { getMailSubscriptionsRoute, putMailSubscriptionsRoute, testMailRoute } from "./routes.ts";
import { MailNotConfiguredError, sendMail } from "./send.ts";
import { setMailSubscriptions, showSubscriptions } from "./subscriptions.ts";

/** A user's mail subscriptions: in v1 and, as every user route, in v2. */
export function registerMailRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getMailSubscriptionsRoute, async (c) =>
    c.json({ data: await showSubscriptions(c.var.services.db, c.req.valid("param").id) }, 200),
  );

  app.openapi(putMailSubscriptionsRoute, async (c) =>
    c.json({ data: await setMailSubscriptions(c, c.req.valid("param").id, c.req.valid("json")) }, 200),
  );
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
