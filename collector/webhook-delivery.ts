import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { eq } from "drizzle-orm";
import { webhooks, type DeliveryOutcome } from "../src/db/schema/index.ts";
import { getSettings } from "../src/platform/settings/service.ts";
import type { ConsumerContext, ConsumerResult, EventConsumer, StoredEvent } from "../src/modules/events/index.ts";
import { EVENT_TYPES } from "../src/platform/outbox/catalogue.ts";
import { EXCERPT_BYTES, logDelivery, settleSubscription, webhookTargets } from "../src/modules/webhooks/index.ts";
import { signPayload } from "../src/modules/webhooks/index.ts";
import { isNonPublicAddress, refusedAddress, refusedUrl } from "../src/modules/webhooks/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import packageJson from "../package.json" with { type: "json" };

/** Pauses before the 2nd, 3rd, ... attempt (Standard Webhooks' schedule): about a day over 7 retries; later ones wait 10 h. */
export const RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
export const retryPauseMs = (attempt: number) =>
  RETRY_SCHEDULE_MS[Math.min(attempt - 1, RETRY_SCHEDULE_MS.length - 1)]!;

/** A target the checks refused: nothing was sent. */
class TargetRefused extends Error {}

/** An answer, with the address it came from (undefined when the socket had none to tell). */
type Answer =
  | { status: number; excerpt: string; from: string | undefined }
  | { error: string; timedOut: boolean; refused: boolean };

/**
 * A lookup that refuses a name resolving to a forbidden address, so the address checked is the one connected
 * to (no second resolution between check and connect for a rebinding name to change).
 */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return ((
    hostname: string,
    options: LookupOptions,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const list = addresses as LookupAddress[];
      const refused = list.map((a) => refusedAddress(a.address, allowPrivate)).find((r) => r !== null);
      if (refused) return callback(new TargetRefused(`${hostname} resolves to ${refused}`), "");
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  }) as LookupFunction;
}

/** One POST, redirects not followed (an answer is an answer), at most timeoutMs, at most EXCERPT_BYTES of the answer kept. */
function post(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  allowPrivate: boolean,
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(answer);
    };
    const options: RequestOptions = {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      lookup: checkedLookup(allowPrivate),
      signal,
    };
    const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const from = res.socket?.remoteAddress;
      res.on("data", (chunk: Buffer) => {
        if (size < EXCERPT_BYTES) chunks.push(chunk);
        size += chunk.length;
        if (size >= EXCERPT_BYTES)
          finish({
            status: res.statusCode ?? 0,
            excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8"),
            from,
          });
      });
      res.on("end", () =>
        finish({ status: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).toString("utf8"), from }),
      );
      res.on("error", () =>
        finish({ status: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).toString("utf8"), from }),
      );
    });
    const timer = setTimeout(
      () => finish({ error: `no answer within ${timeoutMs / 1000} s`, timedOut: true, refused: false }),
      timeoutMs,
    );
    req.on("error", (err) =>
      finish(
        err instanceof TargetRefused
          ? { error: err.message, timedOut: false, refused: true }
          : { error: failureReason(err).slice(0, 300), timedOut: false, refused: false },
      ),
    );
    req.end(body);
  });
}

/**
 * The answer's first bytes as the delivery log keeps them: a public receiver's always, one at a private, loopback
 * or CGNAT address only when the settings say so. Whoever manages webhooks reads the log, and with private ranges
 * allowed a subscription pointed at an internal service would otherwise read its answers through it.
 */
function keptExcerpt(answer: { excerpt: string; from: string | undefined }, keepPrivate: boolean): string | null {
  if (keepPrivate) return answer.excerpt;
  return answer.from && !isNonPublicAddress(answer.from) ? answer.excerpt : null;
}

/** The body receivers get: the Standard Webhooks payload shape. */
export const webhookBody = (event: Pick<StoredEvent, "id" | "type" | "occurredAt" | "payload">) =>
  JSON.stringify({
    id: `evt_${event.id}`,
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    data: event.payload,
  });

/**
 * Delivers one event to one subscription (the job's target) and logs the attempt. 2xx: delivered. Timeout,
 * connection error or 5xx: retried after retryPauseMs while the settings' retries last. 410: the subscription is
 * disabled. Anything else (3xx: redirects are not followed; 4xx) and a refused target: failed at once.
 */
async function deliver(
  ctx: ConsumerContext,
  event: StoredEvent,
  target: string | null,
  job: Job,
): Promise<ConsumerResult> {
  const id = Number(target);
  const [hook] = await ctx.db.select().from(webhooks).where(eq(webhooks.id, id));
  if (!hook) return { outcome: "done", message: `webhook ${target} was deleted; nothing sent` };
  // Dispatched deliveries stop when the subscription is disabled; a ping or redelivery someone asked for goes anyway.
  if (!hook.enabled && job.trigger === "event")
    return { outcome: "done", message: `webhook ${id} is disabled; nothing sent` };
  const settings = (await getSettings(ctx.db)).settings.webhooks;
  const now = ctx.clock.now();
  const body = webhookBody(event);
  const messageId = `evt_${event.id}`;
  const timestamp = Math.floor(now.getTime() / 1000);
  const secret = await ctx.secrets.decrypt(hook.secretEnc);
  const headers = {
    "content-type": "application/json",
    "user-agent": `netkeep/${packageJson.version}`,
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signPayload(secret, messageId, timestamp, body),
  };
  const url = new URL(hook.url);
  const started = performance.now();
  // A literal address is checked here (Node connects to it without a lookup); a name, as it resolves.
  const refusal = refusedUrl(hook.url, settings.allow_private_ranges);
  const answer: Answer = refusal
    ? { error: refusal, timedOut: false, refused: true }
    : await post(url, body, headers, settings.timeout_seconds * 1000, settings.allow_private_ranges, ctx.signal);
  const latencyMs = Math.round(performance.now() - started);
  const attempt = job.attempts;
  const retriesLeft = attempt <= settings.retries;
  let outcome: DeliveryOutcome;
  let message: string;
  if ("status" in answer) {
    const s = answer.status;
    if (s >= 200 && s < 300) [outcome, message] = ["delivered", `the receiver answered ${s}`];
    else if (s === 410) [outcome, message] = ["gone", "the receiver answered 410 Gone; the subscription is disabled"];
    else if (s >= 500 && retriesLeft) [outcome, message] = ["retrying", `the receiver answered ${s}`];
    else if (s >= 300 && s < 400)
      [outcome, message] = [
        "failed",
        `the receiver answered ${s} (a redirect, not followed: point the webhook at the final URL)`,
      ];
    else [outcome, message] = ["failed", `the receiver answered ${s}`];
  } else if (answer.refused) [outcome, message] = ["refused", `the target was refused: ${answer.error}`];
  else [outcome, message] = [retriesLeft ? "retrying" : "failed", answer.error];
  const retryAt = outcome === "retrying" ? new Date(now.getTime() + retryPauseMs(attempt)) : null;
  if (retryAt) message += `; attempt ${attempt + 1} at ${retryAt.toISOString()}`;
  else if (outcome === "failed" && attempt > 1) message += ` (after ${attempt} attempts)`;
  await ctx.db.transaction(async (tx) => {
    await logDelivery(tx, {
      webhookId: id,
      eventId: event.id,
      eventType: event.type,
      attempt,
      outcome,
      statusCode: "status" in answer ? answer.status : null,
      latencyMs: refusal ? null : latencyMs,
      responseExcerpt: "status" in answer ? keptExcerpt(answer, settings.private_response_excerpts) : null,
      message,
      createdAt: now,
    });
    if (outcome !== "retrying" && event.type !== "webhook.ping") await settleSubscription(tx, id, outcome, now);
  });
  const result = {
    webhook_id: id,
    event_id: event.id,
    delivery_outcome: outcome,
    status_code: "status" in answer ? answer.status : null,
    latency_ms: latencyMs,
  };
  if (retryAt) return { outcome: "retry", at: retryAt, message, result };
  return outcome === "delivered" ? { outcome: "done", message, result } : { outcome: "failed", message, result };
}

/** The webhooks consumer: one job per event and subscription that takes it. */
export const webhooksConsumer: EventConsumer = {
  name: "webhooks",
  types: EVENT_TYPES,
  targets: webhookTargets,
  handle: deliver,
};
