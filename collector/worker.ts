import {
  claimNextJob,
  releaseJob,
  requeueExpiredLeases,
  STOPPED_TOO_OFTEN,
  stoppedTooOften,
  type Job,
} from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { collectorSettingsCache } from "./collector-settings.ts";
import type { DownloadDeps } from "./download.ts";
import { handlerFor } from "./job-handlers.ts";
import { describeError } from "./errors.ts";
import { keepLease } from "./lease.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";
import { withFields } from "../src/kernel/logger.ts";

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

/** How long stop() waits for the runs it aborted to wind down after handing their jobs back. */
const ABORTED_RUNS_WAIT_MS = 1000;

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 50,
  pollIntervalMs: 1000,
  leaseMs: 60_000,
  jobTimeLimitMs: 10 * 60_000,
};

/**
 * Claims jobs while it has free slots, runs each with a heartbeat that keeps its lease and a watchdog that
 * aborts it at the time limit, and puts back in the queue the jobs of collectors that stopped heartbeating.
 */
export function startWorker(given: DownloadDeps, options: WorkerOptions) {
  // Every worker follows the settings (timeouts), read at most every SETTINGS_TTL_MS.
  const deps: DownloadDeps = { ...given, settings: given.settings ?? collectorSettingsCache(given) };
  /** The jobs in hand, each with what aborts it. */
  const active = new Map<Promise<void>, { job: Job; controller: AbortController }>();
  /** Whether the last claim came back empty (see `waiting`). */
  let queueEmpty = true;
  /**
   * Jobs in hand whose session has ended, their download being stored: they no longer count against
   * `concurrency`, so another session starts while the store thread stores (with its batch, tens of ms on a
   * loaded machine: that long, a session slot stood idle). The storing places (download.ts) bound how many.
   */
  let storingNow = 0;
  const pause = wakeableSleep();
  let running = true;
  let lastRequeue = 0;

  async function run(job: Job, controller: AbortController): Promise<void> {
    // Everything the job logs, down to its session, carries its id.
    const jobDeps: DownloadDeps = { ...deps, logger: withFields(deps.logger, { job_id: job.id }) };
    const limit = setTimeout(
      () => controller.abort(`the job ran past its time limit of ${options.jobTimeLimitMs / 1000} s`),
      options.jobTimeLimitMs,
    );
    const stopRenewing = keepLease(jobDeps, job.id, options.leaseMs, () =>
      controller.abort("the job's lease was lost"),
    );
    const started = Date.now();
    let handedOver = false;
    const sessionEnded = () => {
      if (handedOver) return;
      handedOver = true;
      storingNow++;
      pause.wake();
    };
    try {
      if (stoppedTooOften(job)) {
        jobDeps.logger.warn("job not run: its collector stopped while running it on its last two attempts", {
          type: job.type,
          device: job.deviceId,
          attempts: job.attempts - 1,
        });
        await finishJob(jobDeps.db, job, jobDeps.owner, STOPPED_TOO_OFTEN, jobDeps.clock.now());
      } else {
        const handler = handlerFor(job, jobDeps);
        if (handler) {
          const end = await handler.run(jobDeps, job, {
            signal: controller.signal,
            leaseMs: options.leaseMs,
            sessionEnded,
          });
          // One line per run: which collector ran what, and how it went (messages never carry secrets).
          if (end)
            jobDeps.logger.info(end.retrying ? "job will be retried" : "job finished", {
              type: job.type,
              device: job.deviceId ?? undefined,
              attempt: job.attempts,
              outcome: end.outcome,
              message: end.message,
              retrying: end.retrying,
              duration_ms: Date.now() - started,
            });
        } else
          await finishJob(
            jobDeps.db,
            job,
            jobDeps.owner,
            { outcome: "error", message: `this collector cannot run ${job.type} jobs` },
            jobDeps.clock.now(),
          );
      }
    } catch (err) {
      // Recording how the job ended failed (a busy database only delays it: WAIT_UNTIL_WRITTEN). Ending the job
      // with the error, in a statement of its own, frees its device now instead of when its lease runs out.
      jobDeps.logger.error("job failed", { error: describeError(err) });
      await finishJob(
        jobDeps.db,
        job,
        jobDeps.owner,
        { outcome: "error", message: `the job's end could not be recorded: ${failureReason(err).slice(0, 500)}` },
        jobDeps.clock.now(),
      ).catch((again) =>
        jobDeps.logger.error("could not end the job; its lease will run out", { error: describeError(again) }),
      );
    } finally {
      clearTimeout(limit);
      stopRenewing();
      if (handedOver) storingNow--;
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
        while (running && active.size - storingNow < options.concurrency) {
          const job = await claimNextJob(deps.db, deps.owner, deps.clock.now(), options.leaseMs);
          queueEmpty = !job;
          if (!job) break;
          const controller = new AbortController();
          const task: Promise<void> = run(job, controller).finally(() => {
            active.delete(task);
            pause.wake();
          });
          active.set(task, { job, controller });
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
    /** Whether jobs wait in the queue for a free slot: the last claim found one (none has come back empty since). */
    get waiting() {
      return !queueEmpty;
    },
    /** Looks for work now rather than at the end of the poll interval (the dispatcher queued some). */
    wake(): void {
      pause.wake();
    },
    /**
     * Stops claiming, then waits for the jobs in hand. With `handBackAt` (epoch ms), the jobs still running then
     * go back to the queue (releaseJob: another collector may take them at once, no lease to wait out, the
     * attempt not counted) and are aborted; their ends write nothing, the lease being gone. Resolves with how
     * many were handed back. Without it, it waits as long as they take.
     */
    async stop(handBackAt = Infinity): Promise<number> {
      running = false;
      pause.wake();
      await loop;
      const finished = Promise.allSettled([...active.keys()]);
      let timer: NodeJS.Timeout | undefined;
      const late = Number.isFinite(handBackAt)
        ? new Promise<"late">((r) => (timer = setTimeout(() => r("late"), Math.max(0, handBackAt - Date.now()))))
        : undefined;
      const first = await Promise.race([finished, ...(late ? [late] : [])]);
      clearTimeout(timer);
      if (first !== "late") return 0;
      const left = [...active.values()];
      let handedBack = 0;
      for (const { job, controller } of left) {
        // Released before aborted, so the aborted run finds its lease gone and records nothing over it.
        if (await releaseJob(deps.db, job.id, deps.owner, deps.clock.now()).catch(() => false)) handedBack++;
        controller.abort("the collector is stopping; the job went back to the queue");
      }
      // An aborted session closes its socket at once; a run that does not end soon is left behind (the process exits).
      await Promise.race([finished, new Promise((r) => setTimeout(r, ABORTED_RUNS_WAIT_MS))]);
      return handedBack;
    },
  };
}
