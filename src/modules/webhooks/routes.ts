import { z } from "@hono/zod-openapi";
import { webhookDeliveries, webhooks, DELIVERY_OUTCOMES } from "../../db/schema/index.ts";
import { inArray } from "drizzle-orm";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema, type ListSpec } from "../../platform/http/list.ts";
import { booleanFilter } from "../../platform/http/filters.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { EVENT_CATALOGUE, EVENT_TYPES, EventEnvelope, type EventType } from "../../platform/outbox/catalogue.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";

const tag = "Webhooks";

/** PascalCase schema name of an event type's payload: config.changed -> ConfigChangedPayload. */
export const payloadSchemaName = (type: string) =>
  type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("") + "Payload";

/** The catalogue in the API description: the body every webhook receives, and each type's payload. */
export function registerEventSchemas(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.register("Event", EventEnvelope);
  for (const [type, def] of Object.entries(EVENT_CATALOGUE)) {
    registry.register(
      payloadSchemaName(type),
      def.payload.openapi({ description: `The data of a ${type} event: ${def.describe}` }),
    );
  }
}
/** Said on every route but the catalogue (service.ts requireWholeEstate). */
const WHOLE_ESTATE = " Webhooks carry events about every device: a user whose role is scoped gets 403.";

/** Types a subscription may choose: every type but the ping, which goes only where it is asked for. */
export const SUBSCRIBABLE = EVENT_TYPES.filter((t) => t !== "webhook.ping") as [EventType, ...EventType[]];

export const Webhook = z
  .object({
    id: z.number().int(),
    url: z.string(),
    description: z.string(),
    event_types: z.array(z.string()).nullable().openapi({ description: "Event types delivered; null: every type" }),
    tag_ids: z.array(z.number().int()).openapi({
      description:
        "Device filter: events about a device go only if it carries one of these tags (or is in one of category_ids); both empty: any device. Events about no device are not filtered.",
    }),
    category_ids: z.array(z.number().int()),
    enabled: z.boolean(),
    consecutive_failures: z
      .number()
      .int()
      .openapi({ description: "Events in a row whose delivery failed after every retry; 5 disable the subscription" }),
    disabled_reason: z
      .string()
      .nullable()
      .openapi({ description: "Why the service disabled it (410 Gone, failing for too long); null otherwise" }),
    disabled_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Webhook");

const WithSecret = Webhook.extend({
  secret: z.string().openapi({
    description: "The signing secret (Standard Webhooks, whsec_...): shown this once; rotate-secret makes a new one",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("WebhookWithSecret");

const fields = {
  url: singleLine(z.string().trim().min(1, "must not be empty").max(2000, "must be at most 2000 characters")).openapi({
    description:
      "http:// or https://; link-local and cloud metadata addresses are refused, private ones unless settings.webhooks.allow_private_ranges",
    example: "https://hooks.example.net/netkeep",
  }),
  description: freeText(z.string().max(1000, "must be at most 1000 characters"))
    .optional()
    .openapi({ example: "Ticketing system" }),
  event_types: z
    .array(z.enum(SUBSCRIBABLE, { error: `must be one of: ${SUBSCRIBABLE.join(", ")}` }))
    .min(1, "must have at least 1 item (or null for every type)")
    .max(SUBSCRIBABLE.length, `must have at most ${SUBSCRIBABLE.length} items`)
    .nullable()
    .optional()
    .openapi({ description: "Omitted or null: every type", example: ["config.changed", "backup.failed"] }),
  tag_ids: z
    .array(z.number({ error: "must be a tag id" }).int("must be a tag id").min(1, "must be a tag id"))
    .max(100, "must have at most 100 items")
    .optional()
    .openapi({ example: [] }),
  category_ids: z
    .array(z.number({ error: "must be a category id" }).int("must be a category id").min(1, "must be a category id"))
    .max(100, "must have at most 100 items")
    .optional()
    .openapi({ example: [] }),
  enabled: z
    .boolean({ error: "must be true or false" })
    .optional()
    .openapi({ description: "Enabling a subscription the service disabled clears its failures", example: true }),
};
export const WebhookInput = z.strictObject(fields).openapi("WebhookInput");
export const WebhookPatch = z.strictObject({ ...fields, url: fields.url.optional() }).openapi("WebhookPatch");
export type WebhookPatchT = z.infer<typeof WebhookPatch>;

export const webhookListSpec: ListSpec = {
  fields: Object.keys(Webhook.shape),
  filters: { enabled: booleanFilter(webhooks.enabled, "enabled") },
  sorts: { id: webhooks.id, created_at: webhooks.createdAt },
  defaultSort: "id",
  idColumn: webhooks.id,
};

export const Delivery = z
  .object({
    id: z.number().int(),
    webhook_id: z.number().int(),
    event_id: z.number().int(),
    event_type: z.string(),
    attempt: z.number().int().openapi({ description: "1 for the first try" }),
    outcome: z.enum(DELIVERY_OUTCOMES).openapi({
      description:
        "delivered (2xx); retrying (timeout, connection error, 5xx: tried again later); failed (after the last retry, or any other answer: redirects are not followed); gone (410: the subscription was disabled); refused (the target address is not allowed)",
    }),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int().nullable(),
    response_excerpt: z
      .string()
      .nullable()
      .openapi({ description: "The start of the receiver's answer (at most 1 KB)" }),
    message: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("WebhookDelivery");

export const deliveryListSpec: ListSpec = {
  fields: Object.keys(Delivery.shape),
  filters: {
    outcome: {
      describe: DELIVERY_OUTCOMES.join(", "),
      example: "failed",
      build: (v) => inArray(webhookDeliveries.outcome, v as (typeof DELIVERY_OUTCOMES)[number][]),
    },
    event_id: {
      describe: "Event id",
      example: "1",
      build: (v) => inArray(webhookDeliveries.eventId, v.map(Number).filter(Number.isSafeInteger)),
    },
  },
  sorts: { id: webhookDeliveries.id },
  defaultSort: "-id",
  idColumn: webhookDeliveries.id,
};

const one = z.object({ data: Webhook });
const queued = {
  200: jsonResponse(
    z.object({ data: Job }),
    "The finished delivery job (with wait): its result says how the receiver answered",
  ),
  202: jsonResponse(
    z.object({ data: Job }),
    "Queued for a collector (collectors deliver webhooks): poll status_url, or read the delivery log",
  ),
};

export const listWebhooksRoute = apiRoute({
  method: "get",
  path: "/webhooks",
  operationId: "listWebhooks",
  tag,
  ability: "system.read",
  summary: "List webhook subscriptions",
  description: WHOLE_ESTATE.trim(),
  request: { query: listQuerySchema(webhookListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Webhook), "A page of subscriptions") },
});

export const eventTypesRoute = apiRoute({
  method: "get",
  path: "/webhooks/event-types",
  operationId: "listEventTypes",
  tag,
  ability: "system.read",
  summary: "List the event catalogue",
  description:
    "Every event type, what it means, and its payload's schema (also in docs/events.md). Webhook bodies are the Event schema: id, type, timestamp, data.",
  responses: {
    200: jsonResponse(
      z.object({
        data: z.array(
          z.object({ type: z.string(), description: z.string(), payload_schema: z.record(z.string(), z.unknown()) }),
        ),
      }),
      "The catalogue",
    ),
  },
});

export const createWebhookRoute = apiRoute({
  method: "post",
  path: "/webhooks",
  operationId: "createWebhook",
  tag,
  ability: "system.write",
  summary: "Create a webhook subscription",
  description:
    "Answers with the signing secret, shown this once. Deliveries are signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature); see docs/events.md." +
    WHOLE_ESTATE,
  request: jsonBody(WebhookInput),
  responses: {
    201: jsonResponse(z.object({ data: WithSecret }), "The subscription and its secret; Location names its URL"),
  },
});

export const getWebhookRoute = apiRoute({
  method: "get",
  path: "/webhooks/{id}",
  operationId: "getWebhook",
  tag,
  ability: "system.read",
  summary: "Show a webhook subscription",
  description: WHOLE_ESTATE.trim(),
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(one, "The subscription (never its secret)") },
});

export const updateWebhookRoute = apiRoute({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhook",
  tag,
  ability: "system.write",
  summary: "Update a webhook subscription",
  description:
    "Only the fields sent change. Enabling a subscription clears its failure count and the reason the service disabled it." +
    WHOLE_ESTATE,
  request: { params: pathIds("id"), ...jsonBody(WebhookPatch) },
  responses: { 200: jsonResponse(one, "The updated subscription") },
});

export const deleteWebhookRoute = apiRoute({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhook",
  tag,
  ability: "system.write",
  summary: "Delete a webhook subscription",
  description: "Its delivery log goes with it; deliveries already queued are dropped." + WHOLE_ESTATE,
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});

export const rotateSecretRoute = apiRoute({
  method: "post",
  path: "/webhooks/{id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  tag,
  ability: "system.write",
  summary: "Rotate a webhook's signing secret",
  description:
    "Makes a new secret, shown this once; every delivery from now on is signed with it (deliveries in flight may carry the old one)." +
    WHOLE_ESTATE,
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(z.object({ data: WithSecret }), "The subscription and its new secret") },
});

export const pingWebhookRoute = apiRoute({
  method: "post",
  path: "/webhooks/{id}/ping",
  operationId: "pingWebhook",
  tag,
  ability: "system.write",
  summary: "Send a test delivery",
  description:
    "Queues a webhook.ping event for this subscription only (enabled or not); a collector sends it. With wait=N (at most 60 s) the answer waits for the result." +
    WHOLE_ESTATE,
  request: { params: pathIds("id"), query: z.object({ wait: WaitSeconds }) },
  responses: queued,
});

export const listDeliveriesRoute = apiRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  tag,
  ability: "system.read",
  summary: "List a webhook's delivery log",
  description:
    "Every attempt, newest first: outcome, HTTP status, latency, the start of the answer. The newest 500 per subscription are kept." +
    WHOLE_ESTATE,
  request: { params: pathIds("id"), query: listQuerySchema(deliveryListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Delivery), "A page of the log") },
});

export const redeliverRoute = apiRoute({
  method: "post",
  path: "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  operationId: "redeliverWebhookEvent",
  tag,
  ability: "system.write",
  summary: "Deliver a logged event again",
  description:
    "Queues the delivery's event for this subscription once more (same webhook-id, a fresh signature and timestamp), with a fresh set of retries." +
    WHOLE_ESTATE,
  request: { params: pathIds("id").extend(pathIds("delivery_id").shape), query: z.object({ wait: WaitSeconds }) },
  responses: queued,
});
