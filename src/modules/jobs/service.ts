import { and, desc, eq, isNotNull, isNull, notInArray, or, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { devices, jobs } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { enqueueDeviceJob, PRIORITY, type Job } from "../../platform/jobs/queue.ts";
import { recordActivity, type Actor } from "../../platform/audit/record.ts";
import { deviceJobAttempts } from "../../platform/settings/service.ts";

async function deviceInScope(db: DbOrTx, scope: DeviceScope, id: number) {
  const [row] = await db
    .select({ id: devices.id, enabled: devices.enabled })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Device ${id}`);
  return row;
}

/**
 * Queues a download of one device ahead of the schedule (or finds the one already queued): 404 outside the scope,
 * 409 for a disabled device. Recorded in the activity log when it queued a new job.
 */
export async function requestDownloadNow(
  db: DbOrTx,
  scope: DeviceScope,
  actor: Actor & { userId: number },
  deviceId: number,
  now: Date,
): Promise<Job> {
  const device = await deviceInScope(db, scope, deviceId);
  if (!device.enabled)
    throw ApiError.conflict(`Device ${deviceId} is disabled; enable it before downloading its configuration`);
  const { job, created } = await enqueueDeviceJob(
    db,
    {
      type: "download",
      deviceId,
      trigger: "download_now",
      priority: PRIORITY.downloadNow,
      requestedBy: actor.userId,
      maxAttempts: await deviceJobAttempts(db),
    },
    now,
  );
  if (created) {
    await recordActivity(
      db,
      actor,
      { action: "device.download_now", subjectType: "device", subjectId: deviceId, after: { job_id: job.id } },
      now,
    );
  }
  return job;
}

/**
 * Which jobs a scoped user sees (undefined: every job): those about a device in their scope, and those about no
 * device (a compliance run, the retention purge) that they asked for themselves.
 */
function visibleJob(scope: DeviceScope, userId: number): SQL | undefined {
  if (scope.all) return undefined;
  return or(
    and(isNotNull(jobs.deviceId), deviceScopeCondition(scope)),
    and(isNull(jobs.deviceId), eq(jobs.requestedBy, userId)),
  );
}

/** One job the caller may see; 404 otherwise. */
export async function getVisibleJob(db: DbOrTx, scope: DeviceScope, userId: number, id: number): Promise<Job> {
  const [row] = await db
    .select({ job: jobs })
    .from(jobs)
    .leftJoin(devices, eq(devices.id, jobs.deviceId))
    .where(and(eq(jobs.id, id), visibleJob(scope, userId)));
  if (!row) throw ApiError.notFound(`Job ${id}`);
  return row.job;
}

/** A device's newest download that ended badly (not success, unchanged or cancelled), if any. */
export async function lastFailedDownload(db: DbOrTx, deviceId: number): Promise<Job | null> {
  const [row] = await db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.deviceId, deviceId),
        eq(jobs.type, "download"),
        eq(jobs.state, "finished"),
        notInArray(jobs.outcome, ["success", "unchanged", "cancelled"]),
      ),
    )
    .orderBy(desc(jobs.id))
    .limit(1);
  return row ?? null;
}
