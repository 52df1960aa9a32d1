import { completeJob, type Job } from "../src/jobs/queue.ts";
import { purgeConfigs } from "../src/modules/configs/retention.ts";
import { describeError, type DownloadDeps, type JobEnd } from "./download.ts";

/**
 * The retention purge task's job: applies the retention policy to every device and records what went. The
 * purge is its own transaction and safe to repeat, so a job retried after a lost lease does no harm.
 */
export async function runPurgeJob(deps: DownloadDeps, job: Job): Promise<JobEnd | undefined> {
  const started = Date.now();
  let end: JobEnd;
  let result: Record<string, unknown>;
  try {
    const report = await purgeConfigs(deps.db, deps.clock.now(), { dryRun: false });
    const { keepDays, keepVersions } = report.policy;
    end = {
      outcome: "success", retrying: false,
      message: keepDays === null && keepVersions === null
        ? "the retention policy keeps every version; nothing to purge"
        : `deleted ${report.configs.length} configuration versions and ${report.failedJobIds.length} failed download records`,
    };
    result = {
      keep_days: keepDays, keep_versions: keepVersions, configs_deleted: report.configs.length, changes_deleted: report.changes,
      blobs_deleted: report.blobs, bytes_freed: report.blobBytes, failed_jobs_deleted: report.failedJobIds.length,
    };
  } catch (err) {
    deps.logger.error("retention purge failed", { job: job.id, error: describeError(err) });
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    end = { outcome: "error", retrying: false, message: `the retention purge failed: ${reason.slice(0, 500)}` };
    result = {};
  }
  const { recorded, retrying } = await completeJob(deps.db, job, deps.owner, { outcome: end.outcome, message: end.message, result: { duration_ms: Date.now() - started, ...result } }, deps.clock.now());
  return recorded ? { ...end, retrying } : undefined;
}
