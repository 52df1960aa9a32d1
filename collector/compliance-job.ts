import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { runComplianceJob as evaluateJob } from "../src/modules/compliance/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { DownloadDeps } from "./download.ts";
import type { JobEnd } from "./store-download.ts";
import { describeError } from "./errors.ts";

/**
 * A compliance job: a task's check of one device, or an on-demand run of a policy or an assignment. It reads
 * stored configurations only (never the device), and storing a result twice is impossible, so a job retried
 * after a lost lease does no harm.
 */
export async function runComplianceJob(deps: DownloadDeps, job: Job): Promise<JobEnd | undefined> {
  const started = Date.now();
  let end: JobEnd;
  let result: Record<string, unknown>;
  try {
    const done = await evaluateJob(deps.db, job, deps.clock.now());
    end = { outcome: "success", retrying: false, message: done.message };
    result = done.summary;
  } catch (err) {
    deps.logger.error("compliance check failed", { job: job.id, error: describeError(err) });
    end = {
      outcome: "error",
      retrying: false,
      message: `the compliance check failed: ${failureReason(err).slice(0, 500)}`,
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
