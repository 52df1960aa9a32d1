import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { answerJob } from "../jobs/index.ts";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  pingWebhook,
  redeliverWebhookEvent,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookActor,
} from "./manage.ts";
import {
  createWebhookRoute,
  deleteWebhookRoute,
  deliveryListSpec,
  eventTypesRoute,
  getWebhookRoute,
  listDeliveriesRoute,
  listWebhooksRoute,
  pingWebhookRoute,
  redeliverRoute,
  registerEventSchemas,
  rotateSecretRoute,
  updateWebhookRoute,
  webhookListSpec,
} from "./routes.ts";
import { eventTypes, listWebhooks, requireWholeEstate as requireScopeAll, serializeWebhook } from "./service.ts";

const actor = (c: Context<AppEnv>): WebhookActor => ({
  db: c.var.services.db,
  secrets: c.var.services.secrets,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>) {
  registerEventSchemas(app.openAPIRegistry);
  app.openapi(listWebhooksRoute, async (c) => {
    const q = parseListQuery(c, webhookListSpec);
    const { total, rows } = await listWebhooks(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(eventTypesRoute, (c) => c.json({ data: eventTypes() }, 200));

  app.openapi(createWebhookRoute, async (c) => {
    const { row, secret } = await createWebhook(actor(c), c.req.valid("json"));
    c.header("Location", new URL(`${c.req.path}/${row.id}`, c.req.url).toString());
    return c.json({ data: { ...serializeWebhook(row), secret } }, 201);
  });

  app.openapi(getWebhookRoute, async (c) => {
    requireScopeAll(c.var.auth.scope);
    return c.json({ data: serializeWebhook(await findWebhook(c.var.services.db, c.req.valid("param").id)) }, 200);
  });

  app.openapi(updateWebhookRoute, async (c) =>
    c.json(
      { data: serializeWebhook(await updateWebhook(actor(c), c.req.valid("param").id, c.req.valid("json"))) },
      200,
    ),
  );

  app.openapi(deleteWebhookRoute, async (c) => {
    const id = c.req.valid("param").id;
    await deleteWebhook(actor(c), id);
    return c.json({ message: `Webhook ${id} deleted` }, 200);
  });

  app.openapi(rotateSecretRoute, async (c) => {
    const { row, secret } = await rotateWebhookSecret(actor(c), c.req.valid("param").id);
    return c.json({ data: { ...serializeWebhook(row), secret } }, 200);
  });

  app.openapi(pingWebhookRoute, async (c) =>
    answerJob(c, await pingWebhook(actor(c), c.req.valid("param").id), c.req.valid("query").wait ?? 0),
  );

  app.openapi(listDeliveriesRoute, async (c) => {
    const { id } = c.req.valid("param");
    requireScopeAll(c.var.auth.scope);
    await findWebhook(c.var.services.db, id);
    const q = parseListQuery(c, deliveryListSpec);
    const { total, rows } = await listDeliveries(c.var.services.db, id, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(redeliverRoute, async (c) => {
    const { id, delivery_id: deliveryId } = c.req.valid("param");
    return answerJob(c, await redeliverWebhookEvent(actor(c), id, deliveryId), c.req.valid("query").wait ?? 0);
  });
}
