import type { JobType } from "../src/db/schema/jobs.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { runBackupJob } from "./backup-job.ts";
import { runComplianceJob } from "./compliance-job.ts";
import { runDetectJob } from "./detect-job.ts";
import { runDiscoverJob } from "./discover-job.ts";
import { type DownloadDeps, runDownloadJob } from "./download.ts";
import { runEventJob } from "./event-job.ts";
import { runPurgeJob } from "./purge-job.ts";
import { runSnippetJob } from "./snippet-job.ts";

/** What the worker hands a handler beside the job. */
export type JobRun = {
  /** Aborted at the job's time limit, when its lease is lost, or when the collector stops. */
  signal: AbortSignal;
  /** The worker's lease length (a snippet push's downloads run under leases of the same length). */
  leaseMs: number;
  /** Tells the worker the device session has ended and only storing is left: the session slot is free. */
  sessionEnded: () => void;
};

/** How a job ended, for the worker's one log line. */
export type HandledEnd = { outcome: string; message: string; retrying?: boolean };

export type JobHandler = {
  /** Whether this collector can run the job; when false it ends with an error saying so. Absent: always. */
  canRun?: (job: Job, deps: DownloadDeps) => boolean;
  /** Runs the job and records its end; undefined when the lease was lost meanwhile (nothing recorded). */
  run: (deps: DownloadDeps, job: Job, run: JobRun) => Promise<HandledEnd | undefined>;
};

const hasDevice = (job: Job) => job.deviceId !== null;

/**
 * Every job kind and what runs it: a new job kind is one entry here (its type in JOB_TYPES makes the compiler ask
 * for it). The worker (worker.ts) claims, leases, times out and logs; a handler only runs the job.
 */
export const JOB_HANDLERS: { readonly [T in JobType]: JobHandler } = {
  // Only a download frees its session slot before storing: a snippet job's downloads come before and after its
  // push, which still needs the slot.
  download: {
    canRun: hasDevice,
    run: (deps, job, { signal, sessionEnded }) => runDownloadJob({ ...deps, handedOver: sessionEnded }, job, signal),
  },
  snippet_push: {
    canRun: hasDevice,
    run: (deps, job, { signal, leaseMs }) => runSnippetJob(deps, job, leaseMs, signal),
  },
  detect: { canRun: hasDevice, run: (deps, job, { signal }) => runDetectJob(deps, job, signal) },
  discover: { run: (deps, job, { signal }) => runDiscoverJob(deps, job, signal) },
  purge_configs: { run: (deps, job) => runPurgeJob(deps, job) },
  backup_database: { run: (deps, job) => runBackupJob(deps, job) },
  event: {
    canRun: (_job, deps) => deps.consumers !== undefined,
    run: (deps, job, { signal }) => runEventJob(deps, deps.consumers ?? [], job, signal),
  },
  compliance: { run: (deps, job) => runComplianceJob(deps, job) },
};

/** The handler that runs this job here, or undefined when this collector cannot run it. */
export function handlerFor(job: Job, deps: DownloadDeps): JobHandler | undefined {
  const handler = (JOB_HANDLERS as Partial<Record<string, JobHandler>>)[job.type];
  return handler && (handler.canRun?.(job, deps) ?? true) ? handler : undefined;
}
