import { gunzipSync } from "node:zlib";
import { and, eq, isNull } from "drizzle-orm";
import { Hono, type Context } from "hono";
import type { z } from "zod";
import { remoteCollectors, zones } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { claimNextZoneJob, extendLease, requeueExpiredLeases } from "../../platform/jobs/queue.ts";
import { isPublicKey } from "../../platform/secrets/sealed-box.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { hashSecret, newCollectorCredential } from "../../modules/zones/index.ts";
import { wireJobOf } from "./claim.ts";
import { storeUpload } from "./store-result.ts";
import {
  ClaimRequest,
  COLLECTOR_CREDENTIAL_HEADER,
  EnrollRequest,
  HeartbeatRequest,
  ResultUpload,
  type WireJob,
} from "./wire.ts";

type Collector = typeof remoteCollectors.$inferSelect;
type Env = AppEnv & { Variables: { collector: Collector } };

/** The largest result upload, compressed and once inflated. */
const MAX_UPLOAD_BYTES = 16 * 1024 * 1024;
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
/** How often a long poll looks at the queue again while it holds a claim open. */
const CLAIM_RECHECK_MS = 250;

const unauthorized = (c: Context) => c.json({ message: "Unauthorized" }, 401);

async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S> | Response> {
  const length = Number(c.req.header("content-length") ?? 0);
  if (length > MAX_UPLOAD_BYTES) return c.json({ message: `The body is larger than ${MAX_UPLOAD_BYTES} bytes` }, 413);
  let raw: Buffer = Buffer.from(await c.req.arrayBuffer());
  if (raw.length > MAX_UPLOAD_BYTES)
    return c.json({ message: `The body is larger than ${MAX_UPLOAD_BYTES} bytes` }, 413);
  try {
    if (c.req.header("content-encoding") === "gzip") raw = gunzipSync(raw, { maxOutputLength: MAX_INFLATED_BYTES });
    const parsed = schema.safeParse(JSON.parse(raw.toString("utf8")));
    if (!parsed.success)
      return c.json(
        { message: `Invalid request: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}` },
        422,
      );
    return parsed.data;
  } catch {
    return c.json({ message: "Malformed body: send JSON, gzip-compressed with Content-Encoding: gzip or plain" }, 400);
  }
}

/** The lease owner a remote collector's jobs carry, as a local collector's host:pid:suffix. */
export const ownerOf = (collector: Pick<Collector, "id" | "name">) => `remote:${collector.id}:${collector.name}`;

/**
 * The API remote collectors speak (collector/remote/), under /collector-api/v1: a machine protocol beside the
 * user API (/api/...), which documents and guards only user-token routes. Enroll with a zone's key, then
 * with the collector's own credential (never a user's token) claim its zone's jobs by long poll, keep their
 * leases, upload results and heartbeat. A revoked or deleted collector's credential answers 401 at once.
 */
export function createCollectorApi(): Hono<Env> {
  const api = new Hono<Env>().basePath("/collector-api/v1");

  api.post("/enroll", async (c) => {
    const input = await body(c, EnrollRequest);
    if (input instanceof Response) return input;
    if (!isPublicKey(input.public_key))
      return c.json({ message: "public_key must be a raw X25519 public key, base64 (32 bytes)" }, 422);
    const { db, clock } = c.var.services;
    const [zone] = await db
      .select()
      .from(zones)
      .where(and(eq(zones.enrollmentKeyHash, await hashSecret(input.enrollment_key)), eq(zones.mode, "remote")));
    if (!zone) return unauthorized(c);
    const credential = newCollectorCredential();
    const now = clock.now();
    const collector = await db.transaction(async (tx) => {
      const [row] = await tx
        .insert(remoteCollectors)
        .values({
          zoneId: zone.id,
          name: input.name,
          publicKey: input.public_key,
          credentialHash: await hashSecret(credential),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await recordActivity(
        tx,
        { system: `remote collector ${input.name}` },
        {
          action: "remote_collector.enroll",
          subjectType: "remote_collector",
          subjectId: row!.id,
          after: { zone_id: zone.id, name: input.name },
        },
        now,
      );
      return row!;
    });
    return c.json({ data: { collector_id: collector.id, zone_id: zone.id, credential } }, 201);
  });

  api.use("*", async (c, next) => {
    if (c.req.path.endsWith("/enroll")) return next();
    const credential = c.req.header(COLLECTOR_CREDENTIAL_HEADER);
    if (!credential) return unauthorized(c);
    const [row] = await c.var.services.db
      .select()
      .from(remoteCollectors)
      .where(
        and(eq(remoteCollectors.credentialHash, await hashSecret(credential)), isNull(remoteCollectors.revokedAt)),
      );
    if (!row) return unauthorized(c);
    c.set("collector", row);
    await next();
  });

  api.post("/heartbeat", async (c) => {
    const input = await body(c, HeartbeatRequest);
    if (input instanceof Response) return input;
    const { db, clock } = c.var.services;
    const now = clock.now();
    await db
      .update(remoteCollectors)
      .set({
        lastSeenAt: now,
        version: input.version,
        sessions: input.sessions,
        spoolBytes: input.spool_bytes,
        spoolDropped: input.spool_dropped,
        updatedAt: now,
      })
      .where(eq(remoteCollectors.id, c.var.collector.id));
    return c.json({ data: { zone_id: c.var.collector.zoneId, server_time: now.toISOString() } }, 200);
  });

  api.post("/jobs/claim", async (c) => {
    const input = await body(c, ClaimRequest);
    if (input instanceof Response) return input;
    const { db, clock, config, secrets, logger } = c.var.services;
    const collector = c.var.collector;
    const owner = ownerOf(collector);
    const leaseMs = config.collectorLeaseMs;
    const until = Date.now() + input.wait_ms;
    const claimed: WireJob[] = [];
    const aborted = c.req.raw.signal;
    for (;;) {
      // A server may run no collector of its own (COLLECTOR=off): its loop is then not there to put back the jobs
      // of a collector that died, so each claim does, and another collector of the zone takes them.
      const requeued = await requeueExpiredLeases(db, clock.now());
      if (requeued) logger.warn("requeued jobs whose collector stopped renewing their lease", { jobs: requeued });
      while (claimed.length < input.max) {
        const job = await claimNextZoneJob(db, collector.zoneId, owner, clock.now(), leaseMs);
        if (!job) break;
        const wired = await wireJobOf(
          { db, secrets, now: () => clock.now(), leaseMs, logger },
          { publicKey: collector.publicKey, owner, zoneId: collector.zoneId },
          job,
        );
        if (wired) claimed.push(wired);
      }
      if (claimed.length || Date.now() >= until || aborted.aborted) break;
      await new Promise((r) => setTimeout(r, Math.min(CLAIM_RECHECK_MS, until - Date.now())));
    }
    return c.json({ data: claimed }, 200);
  });

  api.post("/jobs/:id/lease", async (c) => {
    const id = Number(c.req.param("id"));
    if (!Number.isSafeInteger(id)) return c.json({ message: "Not found" }, 404);
    const { db, clock, config } = c.var.services;
    const kept = await extendLease(db, id, ownerOf(c.var.collector), clock.now(), config.collectorLeaseMs);
    return kept
      ? c.json({ data: { job_id: id, lease_ms: config.collectorLeaseMs } }, 200)
      : c.json({ message: `The lease of job ${id} is not this collector's any more: abandon the job` }, 409);
  });

  api.post("/results", async (c) => {
    const input = await body(c, ResultUpload);
    if (input instanceof Response) return input;
    const { db, clock, secrets } = c.var.services;
    const collector = c.var.collector;
    const stored = await storeUpload(
      { db, secrets, now: clock.now() },
      { id: collector.id, zoneId: collector.zoneId, owner: ownerOf(collector) },
      input,
    );
    if (!stored) return c.json({ message: `Job ${input.job_id} not found` }, 404);
    if (stored.replayed) c.header("Idempotent-Replayed", "true");
    return c.json({ data: stored.answer }, 200);
  });

  return api;
}
