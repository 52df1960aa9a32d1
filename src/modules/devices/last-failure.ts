import { and, desc, eq, notInArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { devices, jobs } from "../../db/schema/index.ts";
import { type DeviceScope, deviceScopeCondition } from "../../platform/auth/scope.ts";
import { ApiError } from "../../platform/http/errors.ts";

/**
 * A device's latest failed download (any outcome but success, unchanged and cancelled), whose result holds the
 * session's transcript (kept there by the collector, secrets masked: collector/transcript.ts); 404 for a device
 * outside the scope or one with no failed download.
 */
export async function lastFailedDownload(db: DbOrTx, scope: DeviceScope, id: number) {
  const [device] = await db
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(scope)));
  if (!device) throw ApiError.notFound(`Device ${id}`);
  const [job] = await db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.deviceId, id),
        eq(jobs.type, "download"),
        eq(jobs.state, "finished"),
        notInArray(jobs.outcome, ["success", "unchanged", "cancelled"]),
      ),
    )
    .orderBy(desc(jobs.id))
    .limit(1);
  if (!job) throw ApiError.notFound(`A failed download of device ${id}`);
  return job;
}
