import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { getMailSubscriptionsRoute, putMailSubscriptionsRoute, testMailRoute } from "./routes.ts";
import { setMailSubscriptions, showSubscriptions } from "./subscriptions.ts";
import { sendTestMail } from "./test-mail.ts";

/** A user's mail subscriptions: in v1 and, as every user route, in v2. */
export function registerMailRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getMailSubscriptionsRoute, async (c) =>
    c.json({ data: await showSubscriptions(c.var.services.db, c.req.valid("param").id) }, 200),
  );

  app.openapi(putMailSubscriptionsRoute, async (c) =>
    c.json(
      {
        data: await setMailSubscriptions(
          { db: c.var.services.db, auth: c.var.auth, now: c.var.services.clock.now() },
          c.req.valid("param").id,
          c.req.valid("json"),
        ),
      },
      200,
    ),
  );
}

/** The SMTP test-send (v1 only, beside the settings it checks). */
export function registerMailTestRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(testMailRoute, async (c) => {
    const { db, secrets } = c.var.services;
    const message = await sendTestMail(db, secrets, c.var.auth.username, c.req.valid("json").to);
    return c.json({ message }, 200);
  });
}
