import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/**
 * The outbox: one row per event, written in the transaction of the change that caused it (src/modules/events/
 * record.ts), so a committed change always has its event and a rolled-back one never does. A collector's
 * dispatcher later claims undispatched rows (dispatched_at null) and queues one job per consumer that takes the
 * type; rows stay as the event history deliveries and redeliveries read.
 */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** A type of the catalogue (src/platform/outbox/catalogue.ts). */
    type: text("type").notNull(),
    /** The event's data, checked against its type's schema when written; never a secret. */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The device the event is about, if any (no foreign key: a device.deleted event outlives its device). */
    deviceId: integer("device_id"),
    occurredAt: timestamp("occurred_at").notNull(),
    /** When a dispatcher queued the event's deliveries; null until then. */
    dispatchedAt: timestamp("dispatched_at"),
  },
  (t) => [index("events_dispatch_idx").on(t.dispatchedAt, t.id)],
);

/** A webhook subscription: where events are POSTed, which ones, and how it is doing. */
export const webhooks = sqliteTable("webhooks", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  url: text("url").notNull(),
  description: text("description").notNull().default(""),
  /** Event types delivered; null: every type. */
  eventTypes: text("event_types", { mode: "json" }).$type<string[]>(),
  /** Device filter: events about a device go only if it carries one of these tags or is in one of these categories (both empty: any device). */
  tagIds: text("tag_ids", { mode: "json" }).$type<number[]>().notNull(),
  categoryIds: text("category_ids", { mode: "json" }).$type<number[]>().notNull(),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  /** The signing secret (whsec_...), encrypted with the app key (src/platform/secrets/box.ts). */
  secretEnc: text("secret_enc").notNull(),
  /** Events in a row whose delivery failed for good (every retry spent); reset by a success. */
  consecutiveFailures: integer("consecutive_failures").notNull().default(0),
  /** Why the service disabled the subscription (410 Gone, failing for too long); null when a person did, or it is enabled. */
  disabledReason: text("disabled_reason"),
  disabledAt: timestamp("disabled_at"),
  createdAt: timestamp("created_at").notNull(),
  updatedAt: timestamp("updated_at").notNull(),
});

export const DELIVERY_OUTCOMES = ["delivered", "retrying", "failed", "gone", "refused"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** Each delivery attempt of an event to a subscription; the newest few hundred per subscription are kept. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    webhookId: integer("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    eventId: integer("event_id").notNull(),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(),
    outcome: text("outcome", { enum: DELIVERY_OUTCOMES }).notNull(),
    /** The receiver's HTTP status; null when no answer came (timeout, connection refused, target refused). */
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms"),
    /** The start of the receiver's answer (at most 1 KB), or what went wrong. */
    responseExcerpt: text("response_excerpt"),
    message: text("message"),
    createdAt: timestamp("created_at").notNull(),
  },
  (t) => [index("webhook_deliveries_webhook_idx").on(t.webhookId, t.id)],
);
