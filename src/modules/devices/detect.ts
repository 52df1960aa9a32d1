import { and, eq } from "drizzle-orm";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import { devices } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { enqueueDeviceJob, PRIORITY, type Job as QueuedJob } from "../../platform/jobs/queue.ts";
import { recordActivity } from "../../platform/audit/record.ts";

/*
 * Which built-in template, vendor, model and OS version a device is. The API never connects to a device: it
 * queues a detect job, which a collector runs (collector/detect-job.ts).
 */

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
