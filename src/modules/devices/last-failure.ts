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

/**
 * What a failed download's result keeps of its session, as GET /devices/{id}/last-failure answers it: the last
 * lines the device printed and the transcript, both masked by the collector before they were stored.
 */
export function failureTranscript(job: { result: Record<string, unknown> | null }): {
  last_lines: string[];
  transcript: string | null;
} {
  const result = job.result ?? {};
  return {
    last_lines: Array.isArray(result.last_lines) ? (result.last_lines as string[]) : [],
    transcript: typeof result.transcript === "string" ? result.transcript : null,
  };
}
