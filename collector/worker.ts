import { claimNextJob, completeJob, extendLease, requeueExpiredLeases, type Job } from "../src/jobs/queue.ts";
import { collectorSettingsCache } from "./collector-settings.ts";
import { runDownloadJob, type DownloadDeps } from "./download.ts";
import { describeError } from "./errors.ts";
import { failureReason } from "../src/error-reason.ts";
import { runPurgeJob } from "./purge-job.ts";
import { runBackupJob } from "./backup-job.ts";
import { runComplianceJob } from "./compliance-job.ts";
import { runSnippetJob } from "./snippet-job.ts";
import { runDetectJob } from "./detect-job.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";

export type WorkerOptions = {
  /** Sessions at once; COLLECTOR_CONCURRENCY. */
  concurrency: number;
  /** How often an idle collector looks for work. */
  pollIntervalMs: number;
  /** A lease this long is renewed every third of it; a collector that dies loses its jobs after it. */
  leaseMs: number;
  /** No job holds a worker longer than this, whatever the device does. */
  jobTimeLimitMs: number;
};

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 50, pollIntervalMs: 1000, leaseMs: 60_000, jobTimeLimitMs: 10 * 60_000 };

/**
 * Claims jobs while it has free slots, runs each with a heartbeat that keeps its lease and a watchdog that
 * aborts it at the time limit, and puts back in the queue the jobs of collectors that stopped heartbeating.
 */
export function startWorker(given: DownloadDeps, options: WorkerOptions) {
  // Every worker follows the settings (timeouts), read at most every SETTINGS_TTL_MS.
  const deps: DownloadDeps = { ...given, settings: given.settings ?? collectorSettingsCache(given) };
  const active = new Set<Promise<void>>();
  const pause = wakeableSleep();
  let running = true;
  let lastRequeue = 0;

  async function run(job: Job): Promise<void> {
    const controller = new AbortController();
    const limit = setTimeout(() => controller.abort(`the job ran past its time limit of ${options.jobTimeLimitMs / 1000} s`), options.jobTimeLimitMs);
    const heartbeat = setInterval(async () => {
      try {
        if (!(await extendLease(deps.db, job.id, deps.owner, deps.clock.now(), options.leaseMs))) controller.abort("the job's lease was lost");
      } catch (err) {
        deps.logger.warn("lease renewal failed", { job: job.id, error: describeError(err) });
      }
    }, Math.max(100, options.leaseMs / 3));
    const started = Date.now();
    try {
      if (job.type === "download" && job.deviceId) {
        const end = await runDownloadJob(deps, job, controller.signal);
        // One line per run: which collector ran what, and how it went (messages never carry secrets).
        if (end) deps.logger.info(end.retrying ? "job will be retried" : "job finished", { job: job.id, device: job.deviceId, attempt: job.attempts, ...end, duration_ms: Date.now() - started });
      } else if (job.type === "snippet_push" && job.deviceId) {
        // The downloads around the push hold their leases for the job's whole time limit: nothing renews them.
        const end = await runSnippetJob(deps, job, options.jobTimeLimitMs, controller.signal);
        if (end) deps.logger.info("job finished", { job: job.id, type: job.type, device: job.deviceId, outcome: end.outcome, message: end.message, duration_ms: Date.now() - started });
      } else if (job.type === "detect" && job.deviceId) {
        const end = await runDetectJob(deps, job, controller.signal);
        if (end) deps.logger.info("job finished", { job: job.id, type: job.type, device: job.deviceId, outcome: end.outcome, message: end.message, duration_ms: Date.now() - started });
      } else if (job.type === "purge_configs") {
        const end = await runPurgeJob(deps, job);
        if (end) deps.logger.info("job finished", { job: job.id, type: job.type, ...end, duration_ms: Date.now() - started });
      } else if (job.type === "backup_database") {
        const end = await runBackupJob(deps, job);
        if (end) deps.logger.info("job finished", { job: job.id, type: job.type, ...end, duration_ms: Date.now() - started });
      } else if (job.type === "compliance") {
        const end = await runComplianceJob(deps, job);
        if (end) deps.logger.info("job finished", { job: job.id, type: job.type, device: job.deviceId, ...end, duration_ms: Date.now() - started });
      } else await completeJob(deps.db, job, deps.owner, { outcome: "error", message: `this collector cannot run ${job.type} jobs` }, deps.clock.now());
    } catch (err) {
      // Recording how the job ended failed (a busy database only delays it: WAIT_UNTIL_WRITTEN). Ending the job
      // with the error, in a statement of its own, frees its device now instead of when its lease runs out.
      deps.logger.error("job failed", { job: job.id, error: describeError(err) });
      await completeJob(deps.db, job, deps.owner, { outcome: "error", message: `the job's end could not be recorded: ${failureReason(err).slice(0, 500)}` }, deps.clock.now())
        .catch((again) => deps.logger.error("could not end the job; its lease will run out", { job: job.id, error: describeError(again) }));
    } finally {
      clearTimeout(limit);
      clearInterval(heartbeat);
    }
  }

  const loop = (async () => {
    while (running) {
      try {
        const now = deps.clock.now();
        if (now.getTime() - lastRequeue > options.leaseMs / 2) {
          lastRequeue = now.getTime();
          const n = await requeueExpiredLeases(deps.db, now);
          if (n) deps.logger.warn("requeued jobs whose collector stopped renewing their lease", { jobs: n });
        }
        while (running && active.size < options.concurrency) {
          const job = await claimNextJob(deps.db, deps.owner, deps.clock.now(), options.leaseMs);
          if (!job) break;
          const task: Promise<void> = run(job).finally(() => {
            active.delete(task);
            pause.wake();
          });
          active.add(task);
        }
      } catch (err) {
        deps.logger.error("collector loop error; retrying", { error: describeError(err) });
      }
      if (running) await pause.sleep(options.pollIntervalMs);
    }
  })();

  return {
    get active() {
      return active.size;
    },
    /** Stops claiming, then waits for the jobs in hand (their leases expire if the process is killed first). */
    async stop(): Promise<void> {
      running = false;
      pause.wake();
      await loop;
      await Promise.allSettled([...active]);
    },
  };
}
