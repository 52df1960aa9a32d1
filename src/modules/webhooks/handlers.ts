import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { DbOrTx } from "../../db/client.ts";
import { categories, tags, webhookDeliveries, webhooks, events } from "../../db/schema/index.ts";
import type { AppEnv } from "../../http/env.ts";
import { ApiError, FieldErrorBag } from "../../http/errors.ts";
import { listEnvelope, parseListQuery } from "../../http/list.ts";
import { recordActivity } from "../activity/record.ts";
import { EVENT_CATALOGUE, EventEnvelope } from "../events/catalogue.ts";
import { queueEventJob } from "../events/dispatch.ts";
import { recordDirectEvent } from "../events/record.ts";
import { answerJob } from "../jobs/handlers.ts";
import { getSettings } from "../settings/service.ts";
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
  rotateSecretRoute,
  updateWebhookRoute,
  webhookListSpec,
  type WebhookPatchT,
} from "./routes.ts";
import {
  listWebhooks,
  requireWholeEstate as requireScopeAll,
  serializeDelivery,
  serializeWebhook,
  type WebhookRow,
} from "./service.ts";
import { newSigningSecret } from "./signing.ts";
import { refusedUrl } from "./target.ts";

/** The consumer name collectors deliver webhooks under (collector/webhook-delivery.ts). */
const CONSUMER = "webhooks";

async function findWebhook(db: DbOrTx, id: number): Promise<WebhookRow> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id));
  if (!row) throw ApiError.notFound(`Webhook ${id}`);
  return row;
}

const requireWholeEstate = (c: Context<AppEnv>) => requireScopeAll(c.var.auth.scope);

/** Checks what the database knows (the URL against the settings, tag and category ids); every problem names its field. */
async function checkInput(db: DbOrTx, input: WebhookPatchT): Promise<void> {
  const bag = new FieldErrorBag();
  if (input.url !== undefined) {
    const refused = refusedUrl(input.url, (await getSettings(db)).settings.webhooks.allow_private_ranges);
    if (refused) bag.add("url", `url ${refused}`);
  }
  for (const [field, table] of [
    ["tag_ids", tags],
    ["category_ids", categories],
  ] as const) {
    const ids = input[field];
    if (!ids?.length) continue;
    const found = new Set(
      (await db.select({ id: table.id }).from(table).where(inArray(table.id, ids))).map((r) => r.id),
    );
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      bag.add(
        field,
        `${field} ${missing.join(", ")} ${missing.length === 1 ? "is not an existing" : "are not existing"} ${field === "tag_ids" ? "tag" : "category"}${missing.length === 1 ? "" : " ids"}`,
      );
  }
  bag.throwIfAny();
}

/** Column values from what was sent: only the fields present. */
function columns(input: WebhookPatchT) {
  return {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.event_types !== undefined ? { eventTypes: input.event_types } : {}),
    ...(input.tag_ids !== undefined ? { tagIds: [...new Set(input.tag_ids)] } : {}),
    ...(input.category_ids !== undefined ? { categoryIds: [...new Set(input.category_ids)] } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
  };
}

/** PascalCase schema name of an event type's payload: config.changed -> ConfigChangedPayload. */
export const payloadSchemaName = (type: string) =>
  type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("") + "Payload";

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>) {
  // The catalogue in the API description: the body every webhook receives, and each type's payload.
  app.openAPIRegistry.register("Event", EventEnvelope);
  for (const [type, def] of Object.entries(EVENT_CATALOGUE)) {
    app.openAPIRegistry.register(
      payloadSchemaName(type),
      def.payload.openapi({ description: `The data of a ${type} event: ${def.describe}` }),
    );
  }
  app.openapi(listWebhooksRoute, async (c) => {
    const q = parseListQuery(c, webhookListSpec);
    const { total, rows } = await listWebhooks(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(eventTypesRoute, (c) =>
    c.json(
      {
        data: Object.entries(EVENT_CATALOGUE).map(([type, def]) => ({
          type,
          description: def.describe,
          payload_schema: z.toJSONSchema(def.payload) as Record<string, unknown>,
        })),
      },
      200,
    ),
  );

  app.openapi(createWebhookRoute, async (c) => {
    requireWholeEstate(c);
    const input = c.req.valid("json");
    const { db, secrets, clock } = c.var.services;
    const now = clock.now();
    const secret = newSigningSecret();
    const row = await db.transaction(async (tx) => {
      await checkInput(tx, input);
      const [created] = await tx
        .insert(webhooks)
        .values({
          url: input.url,
          description: input.description ?? "",
          eventTypes: input.event_types ?? null,
          tagIds: [...new Set(input.tag_ids ?? [])],
          categoryIds: [...new Set(input.category_ids ?? [])],
          enabled: input.enabled ?? true,
          secretEnc: await secrets.encrypt(secret),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await recordActivity(
        tx,
        c.var.auth,
        {
          action: "webhook.create",
          subjectType: "webhook",
          subjectId: created!.id,
          before: null,
          after: serializeWebhook(created!),
          secretsSet: ["secret"],
        },
        now,
      );
      return created!;
    });
    c.header("Location", new URL(`${c.req.path}/${row.id}`, c.req.url).toString());
    return c.json({ data: { ...serializeWebhook(row), secret } }, 201);
  });

  app.openapi(getWebhookRoute, async (c) => {
    requireWholeEstate(c);
    return c.json({ data: serializeWebhook(await findWebhook(c.var.services.db, c.req.valid("param").id)) }, 200);
  });

  app.openapi(updateWebhookRoute, async (c) => {
    requireWholeEstate(c);
    const id = c.req.valid("param").id;
    const input = c.req.valid("json");
    const { db, clock } = c.var.services;
    const now = clock.now();
    const row = await db.transaction(async (tx) => {
      const before = await findWebhook(tx, id);
      await checkInput(tx, input);
      // Enabling (again) starts over: the failures that disabled it are history.
      const reenabled =
        input.enabled === true ? { consecutiveFailures: 0, disabledReason: null, disabledAt: null } : {};
      const [after] = await tx
        .update(webhooks)
        .set({ ...columns(input), ...reenabled, updatedAt: now })
        .where(eq(webhooks.id, id))
        .returning();
      await recordActivity(
        tx,
        c.var.auth,
        {
          action: "webhook.update",
          subjectType: "webhook",
          subjectId: id,
          before: serializeWebhook(before),
          after: serializeWebhook(after!),
        },
        now,
      );
      return after!;
    });
    return c.json({ data: serializeWebhook(row) }, 200);
  });

  app.openapi(deleteWebhookRoute, async (c) => {
    requireWholeEstate(c);
    const id = c.req.valid("param").id;
    const { db, clock } = c.var.services;
    const now = clock.now();
    await db.transaction(async (tx) => {
      const before = await findWebhook(tx, id);
      await tx.delete(webhooks).where(eq(webhooks.id, id));
      await recordActivity(
        tx,
        c.var.auth,
        {
          action: "webhook.delete",
          subjectType: "webhook",
          subjectId: id,
          before: serializeWebhook(before),
          after: null,
        },
        now,
      );
    });
    return c.json({ message: `Webhook ${id} deleted` }, 200);
  });

  app.openapi(rotateSecretRoute, async (c) => {
    requireWholeEstate(c);
    const id = c.req.valid("param").id;
    const { db, secrets, clock } = c.var.services;
    const now = clock.now();
    const secret = newSigningSecret();
    const row = await db.transaction(async (tx) => {
      await findWebhook(tx, id);
      const [after] = await tx
        .update(webhooks)
        .set({ secretEnc: await secrets.encrypt(secret), updatedAt: now })
        .where(eq(webhooks.id, id))
        .returning();
      await recordActivity(
        tx,
        c.var.auth,
        { action: "webhook.rotate_secret", subjectType: "webhook", subjectId: id, secretsSet: ["secret"] },
        now,
      );
      return after!;
    });
    return c.json({ data: { ...serializeWebhook(row), secret } }, 200);
  });

  app.openapi(pingWebhookRoute, async (c) => {
    requireWholeEstate(c);
    const id = c.req.valid("param").id;
    const { db, clock } = c.var.services;
    const now = clock.now();
    const job = await db.transaction(async (tx) => {
      await findWebhook(tx, id);
      const event = await recordDirectEvent(
        tx,
        "webhook.ping",
        { webhook_id: id, message: "A test delivery from netkeep" },
        now,
      );
      await recordActivity(
        tx,
        c.var.auth,
        { action: "webhook.ping", subjectType: "webhook", subjectId: id, after: { event_id: event.id } },
        now,
      );
      return queueEventJob(tx, event, CONSUMER, String(id), now, c.var.auth.userId);
    });
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });

  app.openapi(listDeliveriesRoute, async (c) => {
    requireWholeEstate(c);
    const id = c.req.valid("param").id;
    const { db } = c.var.services;
    await findWebhook(db, id);
    const q = parseListQuery(c, deliveryListSpec, [eq(webhookDeliveries.webhookId, id)]);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(webhookDeliveries)
        .where(q.where)
        .orderBy(...q.orderBy)
        .limit(q.perPage)
        .offset((q.page - 1) * q.perPage),
      db.select({ n: sql<number>`count(*)` }).from(webhookDeliveries).where(q.where),
    ]);
    return c.json(listEnvelope(c, q, Number(total?.n ?? 0), rows.map(serializeDelivery)), 200);
  });

  app.openapi(redeliverRoute, async (c) => {
    requireWholeEstate(c);
    const { id, delivery_id: deliveryId } = c.req.valid("param");
    const { db, clock } = c.var.services;
    const now = clock.now();
    const job = await db.transaction(async (tx) => {
      await findWebhook(tx, id);
      const [delivery] = await tx
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, id)));
      if (!delivery) throw ApiError.notFound(`Delivery ${deliveryId} of webhook ${id}`);
      const [event] = await tx.select({ id: events.id }).from(events).where(eq(events.id, delivery.eventId));
      if (!event) throw ApiError.notFound(`Event ${delivery.eventId}`);
      await recordActivity(
        tx,
        c.var.auth,
        { action: "webhook.redeliver", subjectType: "webhook", subjectId: id, after: { event_id: event.id } },
        now,
      );
      return queueEventJob(tx, event, CONSUMER, String(id), now, c.var.auth.userId);
    });
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });
}
