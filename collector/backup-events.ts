import { sql } from "drizzle-orm";
import type { DbOrTx } from "../src/db/client.ts";
import { jobs, type JobOutcome } from "../src/db/schema/index.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { deviceRef, recordEvents, type NewEvent } from "../src/platform/outbox/record.ts";

const SUCCEEDED: ReadonlySet<JobOutcome | null> = new Set(["success", "unchanged"]);

/**
 * The events of a download's end, written in the transaction that records it: backup.failed (and
 * host_key.changed) when it failed for good, backup.recovered when it succeeded after the device's previous
 * download failed. A failure that will be retried is not an end yet, and says nothing.
 */
export async function recordBackupEnd(
  tx: DbOrTx,
  job: Pick<Job, "id" | "deviceId">,
  end: { outcome: JobOutcome; message: string; retrying: boolean },
  now: Date,
): Promise<void> {
  if (end.retrying || job.deviceId === null || end.outcome === "cancelled") return;
  const list: NewEvent[] = [];
  if (SUCCEEDED.has(end.outcome)) {
    // By id: a device runs one job at a time, so the newest is the last to finish, and jobs_device_idx hands
    // rows of (device, state) in id order: one step back, however long the device's history. SQL, not drizzle's
    // builder (40 us to build): it runs for every stored download.
    const [previous] = await tx.all<{ id: number; outcome: JobOutcome | null }>(sql`select id, outcome from ${jobs}
      where device_id = ${job.deviceId} and type = 'download' and state = 'finished' and id <> ${job.id} and outcome <> 'cancelled'
      order by id desc limit 1`);
    if (!previous || SUCCEEDED.has(previous.outcome)) return;
    const device = await deviceRef(tx, job.deviceId);
    if (device)
      list.push({ type: "backup.recovered", payload: { device, job_id: job.id, previous_job_id: previous.id } });
  } else {
    const device = await deviceRef(tx, job.deviceId);
    if (!device) return;
    list.push({
      type: "backup.failed",
      payload: { device, job_id: job.id, outcome: end.outcome, reason: end.message },
    });
    if (end.outcome === "host_key_changed")
      list.push({ type: "host_key.changed", payload: { device, job_id: job.id, reason: end.message } });
  }
  await recordEvents(tx, list, now);
}
