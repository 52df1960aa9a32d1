import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { categories, events, tags, webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import type { ListQuery } from "../../platform/http/list.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { queueEventJob } from "../events/index.ts";
import { recordDirectEvent } from "../../platform/outbox/record.ts";
import { getSettings } from "../../platform/settings/service.ts";
import type { WebhookPatchT } from "./routes.ts";
import { requireWholeEstate, serializeDelivery, serializeWebhook, type WebhookRow } from "./service.ts";
import { newSigningSecret } from "./signing.ts";
import { refusedUrl } from "./target.ts";

/*
 * Webhook subscriptions' writes and delivery log, for the API handlers and the web pages alike: each checks the
 * caller sees every device (webhooks carry events about all of them), writes in one transaction and records
 * the activity entry.
 */

/** Who acts and when: the API's handlers and the web pages pass the same. */
export type WebhookActor = { db: Db; secrets: SecretBox; auth: AuthContext; now: Date };

/** The consumer name collectors deliver webhooks under (collector/webhook-delivery.ts). */
const CONSUMER = "webhooks";

export async function findWebhook(db: DbOrTx, id: number): Promise<WebhookRow> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id));
  if (!row) throw ApiError.notFound(`Webhook ${id}`);
  return row;
}

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

/** A new subscription and its signing secret (shown once: only its encryption is kept). */
export async function createWebhook({ db, secrets, auth, now }: WebhookActor, input: WebhookPatchT & { url: string }) {
  requireWholeEstate(auth.scope);
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
      auth,
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
  return { row, secret };
}

/** Changes the fields sent; enabling (again) clears the failures that disabled it. */
export async function updateWebhook(
  { db, auth, now }: WebhookActor,
  id: number,
  input: WebhookPatchT,
): Promise<WebhookRow> {
  requireWholeEstate(auth.scope);
  return db.transaction(async (tx) => {
    const before = await findWebhook(tx, id);
    await checkInput(tx, input);
    const reenabled = input.enabled === true ? { consecutiveFailures: 0, disabledReason: null, disabledAt: null } : {};
    const [after] = await tx
      .update(webhooks)
      .set({ ...columns(input), ...reenabled, updatedAt: now })
      .where(eq(webhooks.id, id))
      .returning();
    await recordActivity(
      tx,
      auth,
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
}

export async function deleteWebhook({ db, auth, now }: WebhookActor, id: number): Promise<void> {
  requireWholeEstate(auth.scope);
  await db.transaction(async (tx) => {
    const before = await findWebhook(tx, id);
    await tx.delete(webhooks).where(eq(webhooks.id, id));
    await recordActivity(
      tx,
      auth,
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
}

/** A new signing secret replaces the old one at once; the new one is answered this once. */
export async function rotateWebhookSecret({ db, secrets, auth, now }: WebhookActor, id: number) {
  requireWholeEstate(auth.scope);
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
      auth,
      { action: "webhook.rotate_secret", subjectType: "webhook", subjectId: id, secretsSet: ["secret"] },
      now,
    );
    return after!;
  });
  return { row, secret };
}

/** A `webhook.ping` event queued for this subscription only; answers the delivery job. */
export async function pingWebhook({ db, auth, now }: WebhookActor, id: number) {
  requireWholeEstate(auth.scope);
  return db.transaction(async (tx) => {
    await findWebhook(tx, id);
    const event = await recordDirectEvent(
      tx,
      "webhook.ping",
      { webhook_id: id, message: "A test delivery from netkeep" },
      now,
    );
    await recordActivity(
      tx,
      auth,
      { action: "webhook.ping", subjectType: "webhook", subjectId: id, after: { event_id: event.id } },
      now,
    );
    return queueEventJob(tx, event, CONSUMER, String(id), now, auth.userId);
  });
}

/**
 * One page of a subscription's delivery log, as the list query (deliveryListSpec) asks for it. The caller has
 * found the webhook (findWebhook) for a user who sees every device (requireWholeEstate), before reading the query.
 */
export async function listDeliveries(db: DbOrTx, id: number, query: ListQuery) {
  const q = { ...query, where: and(eq(webhookDeliveries.webhookId, id), query.where) };
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
  return { total: Number(total?.n ?? 0), rows: rows.map(serializeDelivery) };
}

/** The delivery's event queued again for this subscription; answers the delivery job. */
export async function redeliverWebhookEvent({ db, auth, now }: WebhookActor, id: number, deliveryId: number) {
  requireWholeEstate(auth.scope);
  return db.transaction(async (tx) => {
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
      auth,
      { action: "webhook.redeliver", subjectType: "webhook", subjectId: id, after: { event_id: event.id } },
      now,
    );
    return queueEventJob(tx, event, CONSUMER, String(id), now, auth.userId);
  });
}
