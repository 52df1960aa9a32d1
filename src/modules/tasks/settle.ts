import { and, inArray, isNull, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { jobs, taskRunItems, taskRuns } from "../../db/schema/index.ts";
import { completeJob, type Job, type JobCompletion, type JobEnd } from "../../platform/jobs/queue.ts";
import { recordRunsFinished } from "./run-events.ts";

/**
 * completeJob, then the task runs the job belonged to are settled when it was their last open job: the one way a
 * job's runner ends a device job, so a run's finished_at and its task.run.finished event follow however it ended.
 */
export async function finishJob(
  db: DbOrTx,
  job: Pick<Job, "id" | "attempts" | "maxAttempts">,
  owner: string,
  end: JobEnd,
  now: Date,
): Promise<JobCompletion> {
  const done = await completeJob(db, job, owner, end, now);
  if (done.inRun) await settleRunsOfJob(db, job.id, now);
  return done;
}

/**
 * A run is over when none of its items has a job still queued or running (a deleted job counts as over). Asked
 * from the open jobs (the claim index's head), not from the run's items: walking the items met the finished ones
 * first, so every job's end re-read the run's finished items, and a run of n devices cost n²/2 lookups (1.3 s of
 * the store thread at 5,000 devices, against 0.6 s now).
 */
const runHasOpenJobs = sql`exists (
  select 1 from ${jobs} j cross join ${taskRunItems} i
  where j.state in ('queued', 'running') and i.job_id = j.id and i.run_id = ${taskRuns.id})`;

/**
 * Marks finished the task runs whose last open job just finished. Part of completing a job, so a run's
 * finished_at is right however the job ended; settleFinishedRuns catches runs whose jobs were deleted.
 */
export async function settleRunsOfJob(db: DbOrTx, jobId: number, now: Date): Promise<void> {
  const settled = await db
    .update(taskRuns)
    .set({ finishedAt: now })
    .where(
      and(
        isNull(taskRuns.finishedAt),
        inArray(
          taskRuns.id,
          sql`(select ${taskRunItems.runId} from ${taskRunItems} where ${taskRunItems.jobId} = ${jobId})`,
        ),
        sql`not ${runHasOpenJobs}`,
      ),
    )
    .returning({ id: taskRuns.id });
  await recordRunsFinished(
    db,
    settled.map((r) => r.id),
    now,
  );
}

/**
 * Marks finished every open run with no open job left, at the time its last job finished (or now, when its
 * jobs are gone, e.g. their devices were deleted).
 */
export async function settleFinishedRuns(db: DbOrTx, now: Date): Promise<number> {
  const settled = and(isNull(taskRuns.finishedAt), sql`not ${runHasOpenJobs}`);
  // A read first: a scheduler calls this every pass, and usually there is nothing to settle and no lock to take.
  const [any] = await db.select({ id: taskRuns.id }).from(taskRuns).where(settled).limit(1);
  if (!any) return 0;
  const rows = await db
    .update(taskRuns)
    .set({
      finishedAt: sql`coalesce((select max(j.finished_at) from ${taskRunItems} i join ${jobs} j on j.id = i.job_id where i.run_id = ${taskRuns.id}), ${now.getTime()})`,
    })
    .where(settled)
    .returning({ id: taskRuns.id });
  await recordRunsFinished(
    db,
    rows.map((r) => r.id),
    now,
  );
  return rows.length;
}
