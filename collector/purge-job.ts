import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { purgeConfigs, purgeSummary } from "../src/modules/configs/index.ts";
import type { DownloadDeps } from "./download.ts";
import type { JobEnd } from "./store-download.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import { describeError } from "./errors.ts";

/**
 * The retention purge task's job: applies the retention policy to every device and records what went. The
 * purge commits in short batches and is safe to repeat: a job retried after a lost lease, or after the collector
 * stopped midway, finishes what the last one left.
 */
export async function runPurgeJob(deps: DownloadDeps, job: Job): Promise<JobEnd | undefined> {
  const started = Date.now();
  let end: JobEnd;
  let result: Record<string, unknown>;
  try {
    const report = await purgeConfigs(deps.db, deps.clock.now(), {
      dryRun: false,
      // A year's purge runs for minutes: its log says how far it is.
      progress: (line) => deps.logger.info(line, { job: job.id }),
    });
    const { keepDays, keepVersions } = report.policy;
    end = {
      outcome: "success",
      retrying: false,
      message:
        (keepDays === null && keepVersions === null
          ? "the retention policy keeps every version; nothing to purge"
          : `deleted ${report.configs.length} configuration versions and ${report.failedJobIds.length} failed download records`) +
        (report.maintenanceError ? `; storage maintenance failed: ${report.maintenanceError.slice(0, 300)}` : ""),
    };
    if (report.maintenanceError)
      deps.logger.error("storage maintenance after the retention purge failed", {
        job: job.id,
        error: report.maintenanceError,
      });
    result = purgeSummary(report);
  } catch (err) {
    deps.logger.error("retention purge failed", { job: job.id, error: describeError(err) });
    end = {
      outcome: "error",
      retrying: false,
      message: `the retention purge failed: ${failureReason(err).slice(0, 500)}`,
    };
    result = {};
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
