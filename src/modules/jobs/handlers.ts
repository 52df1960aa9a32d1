import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, eq, isNotNull, isNull, or, type SQL } from "drizzle-orm";
import type { AppEnv } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { deviceScopeCondition, type DeviceScope } from "../../auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { devices, jobs } from "../../db/schema/index.ts";
import { enqueueDeviceJob, getJob, PRIORITY, type Job } from "../../jobs/queue.ts";
import { recordActivity } from "../activity/record.ts";
import { downloadNowRoute, getJobRoute } from "./routes.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A job as the API shows it, with the URL to poll. */
export function serializeJob(c: Context, job: Job) {
  return {
    id: job.id, type: job.type, device_id: job.deviceId, state: job.state, outcome: job.outcome, message: job.message,
    trigger: job.trigger, priority: job.priority, attempts: job.attempts, max_attempts: job.maxAttempts, result: job.result ?? null,
    created_at: job.createdAt.toISOString(), started_at: iso(job.startedAt), finished_at: iso(job.finishedAt),
    status_url: new URL(`/api/${c.req.path.split("/")[2]}/jobs/${job.id}`, c.req.url).toString(),
  };
}

async function deviceInScope(db: DbOrTx, scope: DeviceScope, id: number) {
  const [row] = await db.select({ id: devices.id, enabled: devices.enabled }).from(devices).where(and(eq(devices.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Device ${id}`);
  return row;
}

/**
 * Which jobs a scoped user sees (undefined: every job): those about a device in their scope, and those about no
 * device (a compliance run, the retention purge) that they asked for themselves.
 */
function visibleJob(scope: DeviceScope, userId: number): SQL | undefined {
  if (scope.all) return undefined;
  return or(and(isNotNull(jobs.deviceId), deviceScopeCondition(scope)), and(isNull(jobs.deviceId), eq(jobs.requestedBy, userId)));
}

/** Polls until the job finishes or the deadline passes; jobs are finished by collectors in other processes. */
export async function waitForJob(db: DbOrTx, id: number, seconds: number, signal: AbortSignal): Promise<Job> {
  const deadline = Date.now() + seconds * 1000;
  let job = (await getJob(db, id))!;
  while (job.state !== "finished" && Date.now() < deadline && !signal.aborted) {
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, deadline - Date.now()))));
    job = (await getJob(db, id))!;
  }
  return job;
}

export function registerJobRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(downloadNowRoute, async (c) => {
    const { db, clock } = c.var.services;
    const deviceId = c.req.valid("param").device_id;
    const device = await deviceInScope(db, c.var.auth.scope, deviceId);
    if (!device.enabled) throw ApiError.conflict(`Device ${deviceId} is disabled; enable it before downloading its configuration`);
    const now = clock.now();
    const { job, created } = await enqueueDeviceJob(db, { type: "download", deviceId, trigger: "download_now", priority: PRIORITY.downloadNow, requestedBy: c.var.auth.userId }, now);
    if (created) {
      await recordActivity(db, c.var.auth, { action: "device.download_now", subjectType: "device", subjectId: deviceId, after: { job_id: job.id } }, now);
    }
    const wait = c.req.valid("query").wait ?? 0;
    const current = wait > 0 ? await waitForJob(db, job.id, wait, c.req.raw.signal) : job;
    const body = { data: serializeJob(c, current) };
    if (current.state === "finished") return c.json(body, 200);
    c.header("Location", body.data.status_url);
    return c.json(body, 202);
  });

  app.openapi(getJobRoute, async (c) => {
    const { db } = c.var.services;
    const id = c.req.valid("param").id;
    const { scope, userId } = c.var.auth;
    const [row] = await db
      .select({ job: jobs })
      .from(jobs)
      .leftJoin(devices, eq(devices.id, jobs.deviceId))
      .where(and(eq(jobs.id, id), visibleJob(scope, userId)));
    if (!row) throw ApiError.notFound(`Job ${id}`);
    return c.json({ data: serializeJob(c, row.job) }, 200);
  });
}
