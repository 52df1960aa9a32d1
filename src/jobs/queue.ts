import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client.ts";
import { jobs, type JobOutcome, type JobTrigger, type JobType } from "../db/schema/index.ts";

export type Job = typeof jobs.$inferSelect;

/** Outcomes worth another attempt: the device may answer next time. Auth failures and bad templates will not. */
const RETRYABLE: ReadonlySet<JobOutcome> = new Set(["timeout", "unreachable"]);

export const PRIORITY = { scheduled: 0, api: 50, downloadNow: 100 } as const;

/** Backoff before attempt n+1: 30 s, 2 min, 8 min, capped at 30 min. */
export const retryDelayMs = (attempts: number) => Math.min(30_000 * 4 ** Math.max(0, attempts - 1), 30 * 60_000);

/**
 * Queues a job for a device, unless one of the same type is already waiting or running for it: then that job
 * is returned (with its priority raised if this request is more urgent), so pressing "download now" twice
 * never opens two sessions.
 */
export async function enqueueDeviceJob(
  db: DbOrTx,
  input: { type: JobType; deviceId: number; trigger: JobTrigger; priority: number; requestedBy?: number | null; maxAttempts?: number },
  now: Date,
): Promise<{ job: Job; created: boolean }> {
  const [pending] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.deviceId, input.deviceId), eq(jobs.type, input.type), inArray(jobs.state, ["queued", "running"])))
    .limit(1);
  if (pending) {
    if (pending.priority < input.priority) {
      await db.update(jobs).set({ priority: input.priority }).where(eq(jobs.id, pending.id));
      pending.priority = input.priority;
    }
    return { job: pending, created: false };
  }
  const [job] = await db
    .insert(jobs)
    .values({
      type: input.type, deviceId: input.deviceId, trigger: input.trigger, priority: input.priority,
      requestedBy: input.requestedBy ?? null, maxAttempts: input.maxAttempts ?? 3, runAfter: now, createdAt: now,
    })
    .returning();
  return { job: job!, created: true };
}

/** Puts jobs whose collector stopped renewing its lease back in the queue. */
export async function requeueExpiredLeases(db: DbOrTx, now: Date): Promise<number> {
  const rows = await db
    .update(jobs)
    .set({ state: "queued", leaseOwner: null, leaseExpiresAt: null, runAfter: now })
    .where(and(eq(jobs.state, "running"), lt(jobs.leaseExpiresAt, now)))
    .returning({ id: jobs.id });
  return rows.length;
}

/**
 * Claims the most urgent runnable job in one UPDATE ... RETURNING, so two collectors can never take the same
 * job; a job whose device already has a running job waits, so a device never has two sessions at once.
 */
export async function claimNextJob(db: Db, owner: string, now: Date, leaseMs: number): Promise<Job | undefined> {
  const nowMs = now.getTime();
  const [job] = await db
    .update(jobs)
    .set({
      state: "running",
      leaseOwner: owner,
      leaseExpiresAt: new Date(nowMs + leaseMs),
      attempts: sql`${jobs.attempts} + 1`,
      startedAt: sql`coalesce(${jobs.startedAt}, ${nowMs})`,
    })
    .where(eq(jobs.id, sql`(
      select j.id from jobs j
      where j.state = 'queued' and j.run_after <= ${nowMs}
        and (j.device_id is null or not exists (
          select 1 from jobs r where r.device_id = j.device_id and r.state = 'running'))
      order by j.priority desc, j.id
      limit 1)`))
    .returning();
  return job;
}

/** Extends the lease; false means it was lost (expired and requeued), and the caller must abandon the job. */
export async function extendLease(db: DbOrTx, jobId: number, owner: string, now: Date, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(jobs)
    .set({ leaseExpiresAt: new Date(now.getTime() + leaseMs) })
    .where(and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    .returning({ id: jobs.id });
  return rows.length > 0;
}

/**
 * Records how a run ended. A retryable failure with attempts left goes back in the queue after a backoff;
 * anything else finishes the job. Returns false when the lease was lost, so the caller writes nothing else.
 */
export async function completeJob(
  db: DbOrTx,
  job: Pick<Job, "id" | "attempts" | "maxAttempts">,
  owner: string,
  end: { outcome: JobOutcome; message?: string | null; result?: Record<string, unknown> },
  now: Date,
): Promise<{ recorded: boolean; retrying: boolean }> {
  const retrying = RETRYABLE.has(end.outcome) && job.attempts < job.maxAttempts;
  const rows = await db
    .update(jobs)
    .set(
      retrying
        ? { state: "queued", leaseOwner: null, leaseExpiresAt: null, runAfter: new Date(now.getTime() + retryDelayMs(job.attempts)), outcome: end.outcome, message: end.message ?? null, result: end.result ?? null }
        : { state: "finished", leaseOwner: null, leaseExpiresAt: null, outcome: end.outcome, message: end.message ?? null, result: end.result ?? null, finishedAt: now },
    )
    .where(and(eq(jobs.id, job.id), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    .returning({ id: jobs.id });
  return { recorded: rows.length > 0, retrying: retrying && rows.length > 0 };
}

export async function getJob(db: DbOrTx, id: number): Promise<Job | undefined> {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id));
  return job;
}
