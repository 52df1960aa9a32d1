import { z } from "@hono/zod-openapi";
import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { ListQuery } from "../../platform/http/list.ts";
import type { DbOrTx } from "../../db/client.ts";
import { webhookDeliveries, webhooks, type DeliveryOutcome } from "../../db/schema/index.ts";
import { EVENT_CATALOGUE, type DeviceRef } from "../../platform/outbox/catalogue.ts";
import type { StoredEvent } from "../events/index.ts";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Events in a row whose delivery failed for good before the service disables the subscription. */
export const FAILURES_TO_DISABLE = 5;
/** Delivery log rows kept per subscription (the newest). */
export const DELIVERIES_KEPT = 500;
/** The start of a receiver's answer kept in the log. */
export const EXCERPT_BYTES = 1024;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function serializeWebhook(r: WebhookRow) {
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    event_types: r.eventTypes,
    tag_ids: r.tagIds,
    category_ids: r.categoryIds,
    enabled: r.enabled,
    consecutive_failures: r.consecutiveFailures,
    disabled_reason: r.disabledReason,
    disabled_at: iso(r.disabledAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function serializeDelivery(r: DeliveryRow) {
  return {
    id: r.id,
    webhook_id: r.webhookId,
    event_id: r.eventId,
    event_type: r.eventType,
    attempt: r.attempt,
    outcome: r.outcome,
    status_code: r.statusCode,
    latency_ms: r.latencyMs,
    response_excerpt: r.responseExcerpt,
    message: r.message,
    created_at: r.createdAt.toISOString(),
  };
}

/** Webhooks carry events about every device: like settings, they are for roles that see all devices. */
export function requireWholeEstate(scope: DeviceScope): void {
  if (!scope.all)
    throw new ApiError(
      403,
      "Webhooks carry events about every device; managing them needs a role that sees all devices",
    );
}

/** A page of subscriptions (q from parseListQuery with webhookListSpec), for a role that sees every device. */
export async function listWebhooks(db: DbOrTx, scope: DeviceScope, q: ListQuery) {
  requireWholeEstate(scope);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(webhooks)
      .where(q.where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: sql<number>`count(*)` }).from(webhooks).where(q.where),
  ]);
  return { total: Number(total?.n ?? 0), rows: rows.map(serializeWebhook) };
}

/**
 * Whether a subscription takes an event: its type is selected (or all are), and when the subscription filters
 * by tags or categories, an event about a device goes only if the device (as it was then) carries one of the
 * tags or is in one of the categories. Events about no device (tokens, logins, task runs) pass the device filter.
 */
export function subscriptionTakes(
  w: Pick<WebhookRow, "eventTypes" | "tagIds" | "categoryIds">,
  event: Pick<StoredEvent, "type" | "payload">,
): boolean {
  if (event.type === "webhook.ping") return false;
  if (w.eventTypes && !w.eventTypes.includes(event.type)) return false;
  const device = event.payload.device as DeviceRef | undefined;
  if (!device || (!w.tagIds.length && !w.categoryIds.length)) return true;
  return (
    device.tag_ids.some((t) => w.tagIds.includes(t)) ||
    (device.category_id !== null && w.categoryIds.includes(device.category_id))
  );
}

/**
 * The enabled subscriptions each event of a dispatch pass goes to, as the webhooks consumer's targets (ids as
 * text): the subscriptions are read once, at the pass's first event.
 */
export function webhookTargets(db: DbOrTx): (event: StoredEvent) => Promise<string[]> {
  let enabled: Promise<Pick<WebhookRow, "id" | "eventTypes" | "tagIds" | "categoryIds">[]> | undefined;
  return async (event) => {
    enabled ??= (async () =>
      await db
        .select({
          id: webhooks.id,
          eventTypes: webhooks.eventTypes,
          tagIds: webhooks.tagIds,
          categoryIds: webhooks.categoryIds,
        })
        .from(webhooks)
        .where(eq(webhooks.enabled, true)))();
    return (await enabled).filter((w) => subscriptionTakes(w, event)).map((w) => String(w.id));
  };
}

/** Rows a subscription's log may pass DELIVERIES_KEPT by before it is cut back: one delete per this many deliveries. */
const PRUNE_SLACK = 50;

/** Appends an attempt to the subscription's log, dropping what falls past the newest DELIVERIES_KEPT. */
export async function logDelivery(db: DbOrTx, entry: typeof webhookDeliveries.$inferInsert): Promise<void> {
  await db.insert(webhookDeliveries).values(entry);
  // Judged per subscription (an index walk of a few hundred rows), not by the global row id: a subscription
  // whose attempts interleave with another's may never get an id that is a multiple of anything.
  const mine = eq(webhookDeliveries.webhookId, entry.webhookId);
  const newest = (offset: number) =>
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(mine)
      .orderBy(desc(webhookDeliveries.id))
      .limit(1)
      .offset(offset);
  const [over] = await newest(DELIVERIES_KEPT + PRUNE_SLACK - 1);
  if (!over) return;
  const [edge] = await newest(DELIVERIES_KEPT - 1);
  await db.delete(webhookDeliveries).where(and(mine, lt(webhookDeliveries.id, edge!.id)));
}

/** How a delivery ended for good, on the subscription: a success resets its failure count; enough failures, or a 410, disable it. */
export async function settleSubscription(db: DbOrTx, id: number, outcome: DeliveryOutcome, now: Date): Promise<void> {
  if (outcome === "delivered") {
    await db.update(webhooks).set({ consecutiveFailures: 0 }).where(eq(webhooks.id, id));
  } else if (outcome === "gone") {
    await db
      .update(webhooks)
      .set({
        enabled: false,
        disabledReason: "the receiver answered 410 Gone: it asked for no more deliveries",
        disabledAt: now,
        consecutiveFailures: sql`${webhooks.consecutiveFailures} + 1`,
      })
      .where(eq(webhooks.id, id));
  } else if (outcome === "failed" || outcome === "refused") {
    await db
      .update(webhooks)
      .set({
        consecutiveFailures: sql`${webhooks.consecutiveFailures} + 1`,
        enabled: sql`case when ${webhooks.consecutiveFailures} + 1 >= ${FAILURES_TO_DISABLE} then 0 else ${webhooks.enabled} end`,
        disabledReason: sql`case when ${webhooks.enabled} and ${webhooks.consecutiveFailures} + 1 >= ${FAILURES_TO_DISABLE} then ${`the last ${FAILURES_TO_DISABLE} events failed to be delivered after every retry`} else ${webhooks.disabledReason} end`,
        disabledAt: sql`case when ${webhooks.enabled} and ${webhooks.consecutiveFailures} + 1 >= ${FAILURES_TO_DISABLE} then ${now.getTime()} else ${webhooks.disabledAt} end`,
      })
      .where(eq(webhooks.id, id));
  }
}

/** The event catalogue as GET /webhooks/event-types lists it: each type, what it means, its payload's JSON Schema. */
export const eventTypes = () =>
  Object.entries(EVENT_CATALOGUE).map(([type, def]) => ({
    type,
    description: def.describe,
    payload_schema: z.toJSONSchema(def.payload) as Record<string, unknown>,
  }));
