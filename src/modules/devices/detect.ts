import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import { devices } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";
import type { AppEnv, AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { enqueueDeviceJob, PRIORITY, type Job as QueuedJob } from "../../platform/jobs/queue.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { answerJob } from "../jobs/index.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";

/**
 * POST /devices/{id}/detect: which built-in template, vendor, model and OS version a device is. The API never
 * connects to a device: it queues a detect job, which a collector runs (collector/detect-job.ts).
 */

const DetectInput = z
  .strictObject({
    apply: z.boolean().default(false).openapi({
      description: "Set the proposed template, vendor and model on the device when the detection finds one",
      example: true,
    }),
  })
  .openapi("DeviceDetectInput");

export const detectDeviceRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/detect",
  operationId: "detectDevice",
  tag: "Devices",
  ability: "devices.write",
  summary: "Recognise a device's template, vendor, model and OS version",
  description:
    "Queues a detect job that a collector runs: it logs in with the device's credentials (over its template's protocol, " +
    "or SSH when it has none; Telnet on port 23 when SSH is refused, exec channels when a shell is), enters enable mode when " +
    "the credentials carry an enable password, reads the banner, the prompt and the built-in templates' version commands (and SNMP's sysDescr " +
    "and sysObjectID when the device's credential set has SNMP settings), and matches them against each built-in template's " +
    "`detect` section. The finished job's result holds `proposal` ({template_id, template, vendor, model, os_version, matched_by}, " +
    "or null when no template, or more than one equally, fits), `candidates`, `protocol`, `channels`, `enabled`, `banner`, `prompt`, " +
    "`commands_run` and `snmp`; " +
    "its outcome is success when there is a proposal, error when there is none, and the session's failure (auth_failed, " +
    'unreachable, prompt_not_found ...) when the login failed. With {"apply": true} the device\'s template, vendor and model ' +
    "are set to the proposal (`applied` in the result; the activity log records it). Answers 202 with the job and its status " +
    "URL; with wait=N (at most 60 seconds) it waits and answers 200 with the finished job. A detection already queued or " +
    "running for the device is reused when it has the same apply, else 409.",
  request: {
    params: pathIds("id"),
    query: z.object({ wait: WaitSeconds }),
    body: { required: false, content: { "application/json": { schema: DetectInput } } },
  },
  responses: {
    200: jsonResponse(z.object({ data: Job }), "The finished detect job: its result holds the proposal"),
    202: jsonResponse(z.object({ data: Job }), "Queued (or still running): poll status_url"),
    409: jsonResponse(
      z.object({ message: z.string() }),
      "A detection with another apply is already queued or running for the device",
    ),
  },
});

/**
 * Queues a detect job for a device in the caller's scope (404 otherwise); one already queued or running with
 * the same apply is reused, one with the other apply is a 409.
 */
export async function requestDetect(
  db: Db,
  auth: AuthContext,
  id: number,
  apply: boolean,
  now: Date,
): Promise<QueuedJob> {
  const [device] = await db
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(auth.scope)));
  if (!device) throw ApiError.notFound(`Device ${id}`);
  const { job, created } = await enqueueDeviceJob(
    db,
    {
      type: "detect",
      deviceId: id,
      trigger: "api",
      priority: PRIORITY.downloadNow,
      requestedBy: auth.userId,
      maxAttempts: 1,
      params: { apply },
    },
    now,
  );
  if (!created && (job.params?.apply === true) !== apply) {
    throw ApiError.conflict(
      `A detection with apply ${!apply} is already ${job.state} for device ${id} (job ${job.id}); wait for it to finish`,
    );
  }
  if (created)
    await recordActivity(
      db,
      auth,
      { action: "device.detect", subjectType: "device", subjectId: id, after: { job_id: job.id, apply } },
      now,
    );
  return job;
}

export function registerDetectRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(detectDeviceRoute, async (c) => {
    const apply = ((c.req.valid("json") ?? {}) as { apply?: boolean }).apply ?? false;
    const { db, clock } = c.var.services;
    const job = await requestDetect(db, c.var.auth, c.req.valid("param").id, apply, clock.now());
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });
}
