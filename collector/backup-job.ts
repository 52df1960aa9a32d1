import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { takeBackup } from "../src/modules/backups/index.ts";
import type { DownloadDeps } from "./download.ts";
import type { JobEnd } from "./store-download.ts";
import { DISK_FULL_REASON, failureReason, isDiskFull } from "../src/kernel/error-reason.ts";
import { describeError } from "./errors.ts";

/**
 * The database backup task's job: one backup into storage/backups/, then the oldest beyond settings.backups.keep
 * deleted (src/modules/backups/service.ts, as POST /system/backups does). A failure is recorded on the job,
 * where the task's runs and the health checks see it; it is not retried, the next night's run is the retry.
 */
export async function runBackupJob(deps: DownloadDeps, job: Job): Promise<JobEnd | undefined> {
  const started = Date.now();
  let end: JobEnd;
  let result: Record<string, unknown> = {};
  try {
    if (!deps.backups)
      throw new Error("this collector was started without its database location, so it cannot take backups");
    const backup = await takeBackup(deps.db, deps.backups, deps.clock.now(), { system: "database backup task" });
    end = {
      outcome: "success",
      retrying: false,
      message: `wrote ${backup.name} (${backup.bytes} bytes)${backup.pruned.length ? `; deleted ${backup.pruned.length} older backups` : ""}`,
    };
    result = { backup: backup.name, bytes: backup.bytes, sha256: backup.sha256, pruned: backup.pruned };
  } catch (err) {
    deps.logger.error("database backup failed", { job: job.id, error: describeError(err) });
    end = {
      outcome: "error",
      retrying: false,
      message: `the database backup failed: ${isDiskFull(err) ? DISK_FULL_REASON : failureReason(err).slice(0, 500)}`,
    };
  }
  const { recorded, retrying } = await finishJob(
    deps.db,
    job,
    deps.owner,
    { outcome: end.outcome, message: end.message, result: { duration_ms: Date.now() - started, ...result } },
    deps.clock.now(),
  );
  return recorded ? { ...end, retrying } : undefined;
}
