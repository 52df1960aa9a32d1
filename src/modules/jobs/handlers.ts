import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import type { DbOrTx } from "../../db/client.ts";
import { getJob, type Job } from "../../platform/jobs/queue.ts";
import { downloadNowRoute, getJobRoute } from "./routes.ts";
import { getVisibleJob, requestDownloadNow } from "./service.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A job as the API shows it, with the URL to poll. */
export function serializeJob(c: Context, job: Job) {
  return {
    id: job.id,
    type: job.type,
    device_id: job.deviceId,
    state: job.state,
    outcome: job.outcome,
    message: job.message,
    trigger: job.trigger,
    priority: job.priority,
    attempts: job.attempts,
    max_attempts: job.maxAttempts,
    result: job.result ?? null,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    status_url: new URL(`/api/${c.req.path.split("/")[2]}/jobs/${job.id}`, c.req.url).toString(),
  };
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

/**
 * A job just queued, as the routes that queue one answer: after waiting up to `wait` seconds for it, 200 with the
 * finished job, or 202 with the job as it stands and its status URL in Location.
 */
export async function answerJob(c: Context<AppEnv>, job: Job, wait: number) {
  if (job.state === "queued") c.var.services.jobsQueued();
  const current = wait > 0 ? await waitForJob(c.var.services.db, job.id, wait, c.req.raw.signal) : job;
  const body = { data: serializeJob(c, current) };
  if (current.state === "finished") return c.json(body, 200);
  c.header("Location", body.data.status_url);
  return c.json(body, 202);
}

export function registerJobRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(downloadNowRoute, async (c) => {
    const { db, clock } = c.var.services;
    const deviceId = c.req.valid("param").device_id;
    const job = await requestDownloadNow(db, c.var.auth.scope, c.var.auth, deviceId, clock.now());
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });

  app.openapi(getJobRoute, async (c) => {
    const { db } = c.var.services;
    const id = c.req.valid("param").id;
    const job = await getVisibleJob(db, c.var.auth.scope, c.var.auth.userId, id);
    return c.json({ data: serializeJob(c, job) }, 200);
  });
}
