import { z } from "@hono/zod-openapi";
import { and, eq, lte } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { idempotencyKeys } from "../../db/schema/index.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Set to "true" on an answer that repeats an earlier request's instead of running it again. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key holds its answer. Expired rows are swept by the next request that uses a key (as ended web sessions are at login). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim left "running" this long belongs to a process that died mid-request: the next request with the key runs. */
const ABANDONED_AFTER_MS = 10 * 60 * 1000;

const KEY_RULE = "must be 1-255 printable ASCII characters";

/**
 * The optional header every create route documents, and the rule the middleware below applies. (Hono's header
 * validator sees lower-case names, so the schema never rejects on its own: the middleware runs first and does.)
 */
export const IdempotencyHeaders = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1, KEY_RULE)
    .max(255, KEY_RULE)
    .regex(/^[\x20-\x7E]+$/, KEY_RULE)
    .optional()
    .openapi({
      param: { name: IDEMPOTENCY_HEADER, in: "header" },
      description:
        "Any unique string (a UUID) that makes retrying this create safe: a retry with the same key and body within 24 h " +
        "answers 200 with the first answer's body and Location (and `Idempotent-Replayed: true`) instead of creating again. " +
        "The same key with another body or route: 422; while the first request still runs: 409. A request that failed does not keep its key.",
      example: "3f6c2a1e-9b7d-4e52-8d0a-1c2b3a4d5e6f",
    }),
});

/** The 200 a replay answers, documented beside the 201 it repeats. */
export const replayResponse = <T extends { content: unknown }>(created: T) => ({
  ...created,
  description: `A retry with the same ${IDEMPOTENCY_HEADER} and body: the first request's answer (its body as it was then, and Location), with ${REPLAYED_HEADER}: true`,
});

type Claim = typeof idempotencyKeys.$inferSelect;

/**
 * Makes a create route safe to retry. Without the header nothing changes. With it, the first request claims the
 * (token, key) row (the unique index decides between processes), runs, and on success stores its status, body
 * and Location; a failure (4xx or 5xx) deletes the claim, so fixing the request and sending it again with the
 * same key works. A later request with the key replays the stored answer as 200, or is refused: 422 when the
 * route or body differs, 409 while the first is still running.
 */
export function idempotent(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) return next();
    const checked = IdempotencyHeaders.shape[IDEMPOTENCY_HEADER].safeParse(key);
    if (!checked.success) throw ApiError.validation({ [IDEMPOTENCY_HEADER]: [`${IDEMPOTENCY_HEADER} ${KEY_RULE}`] });

    const { db, clock } = c.var.services;
    const tokenId = c.var.auth.tokenId;
    // Keys are kept per token; a web session (no token) has its own CSRF-guarded forms instead.
    if (tokenId === null) return next();
    const route = `${c.req.method} ${c.req.path}`;
    const requestHash = await sha256Hex(await c.req.text());
    const now = clock.now();

    const claim = await db.transaction(async (tx) => {
      await tx.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, now));
      const [held] = await tx
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.tokenId, tokenId), eq(idempotencyKeys.key, key)));
      if (held && !isStale(held, now)) return held;
      if (held) await tx.delete(idempotencyKeys).where(eq(idempotencyKeys.id, held.id));
      const [mine] = await tx
        .insert(idempotencyKeys)
        .values({
          tokenId,
          key,
          route,
          requestHash,
          state: "running",
          createdAt: now,
          expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        })
        .onConflictDoNothing()
        .returning({ id: idempotencyKeys.id });
      if (mine) return mine.id;
      // Another process claimed it between the read and the insert: answer as for any held key.
      return (
        await tx
          .select()
          .from(idempotencyKeys)
          .where(and(eq(idempotencyKeys.tokenId, tokenId), eq(idempotencyKeys.key, key)))
      )[0]!;
    });

    if (typeof claim !== "number") return answerHeld(claim, route, requestHash, c);

    let succeeded = false;
    try {
      await next();
      if (c.res.status >= 200 && c.res.status < 300) {
        // Sealed with the app key: a create may answer with a secret shown once (a webhook's signing secret).
        const body = await c.var.services.secrets.encrypt(await c.res.clone().text());
        await db
          .update(idempotencyKeys)
          .set({ state: "done", status: c.res.status, body, location: c.res.headers.get("Location") })
          .where(eq(idempotencyKeys.id, claim));
        succeeded = true;
      }
    } finally {
      if (!succeeded) await db.delete(idempotencyKeys).where(eq(idempotencyKeys.id, claim));
    }
  };
}

const isStale = (row: Claim, now: Date) =>
  row.state === "running" && now.getTime() - row.createdAt.getTime() >= ABANDONED_AFTER_MS;

async function answerHeld(
  row: Claim,
  route: string,
  requestHash: string,
  c: Parameters<MiddlewareHandler<AppEnv>>[0],
): Promise<Response> {
  if (row.route !== route || row.requestHash !== requestHash) {
    throw ApiError.validation({
      [IDEMPOTENCY_HEADER]: [
        `${IDEMPOTENCY_HEADER} '${row.key}' was already used for a different request (another body or route); use a new key for a new request`,
      ],
    });
  }
  if (row.state === "running")
    throw ApiError.conflict(
      `The first request with ${IDEMPOTENCY_HEADER} '${row.key}' is still running; retry in a moment to get its answer`,
    );
  // Answers stored before they were sealed are JSON as they were. One sealed under an app key since rotated
  // (svc key:rotate re-seals only *_enc columns; these answers live a day) cannot be replayed, and running the
  // request again could create twice: say so instead.
  const body = row.body ?? "";
  const answer = body.startsWith("{") ? body : await c.var.services.secrets.decrypt(body).catch(() => null);
  if (answer === null) {
    throw ApiError.conflict(
      `The answer to the first request with ${IDEMPOTENCY_HEADER} '${row.key}' can no longer be read (the app key was rotated since); check whether that request took effect, then use a new key`,
    );
  }
  c.header(REPLAYED_HEADER, "true");
  if (row.location) c.header("Location", row.location);
  c.header("Content-Type", "application/json");
  return c.body(answer, 200 as ContentfulStatusCode);
}
