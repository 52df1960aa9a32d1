import { and, asc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import {
  DEPLOYMENT_DEVICE_STATUSES,
  jobs,
  snippetDeploymentDevices,
  snippetDeployments,
  taskRunItems,
  type DeploymentDeviceStatus,
  type JobOutcome,
  type JobTrigger,
} from "../../db/schema/index.ts";
import { PRIORITY, type Job, type JobCompletion, type JobEnd } from "../../platform/jobs/queue.ts";
import { recordEvent } from "../../platform/outbox/record.ts";

/** A deployment's guard rails, as the deploy body states them. */
export type DeploymentOptions = { canary: number; stopOnFailure: boolean; concurrency: number };

/** One target as rendered: the device and the exact lines it gets. */
export type RenderedTarget = { deviceId: number; deviceName: string; lines: string[]; rollbackLines: string[] };

/**
 * Records a deployment with each device's lines, in the order given (the first `canary` are the canary), and
 * queues the first pushes. Runs in the caller's transaction.
 */
export async function createDeployment(
  tx: DbOrTx,
  input: {
    snippet: { id: number; name: string };
    kind: "send" | "deploy" | "task";
    taskRunId?: number;
    targets: RenderedTarget[];
    options: DeploymentOptions;
    requestedBy: number | null;
    trigger: JobTrigger;
  },
  now: Date,
): Promise<number> {
  const [deployment] = await tx
    .insert(snippetDeployments)
    .values({
      snippetId: input.snippet.id,
      snippetName: input.snippet.name,
      kind: input.kind,
      taskRunId: input.taskRunId ?? null,
      canary: input.options.canary,
      stopOnFailure: input.options.stopOnFailure,
      concurrency: input.options.concurrency,
      requestedBy: input.requestedBy,
      createdAt: now,
    })
    .returning({ id: snippetDeployments.id });
  const id = deployment!.id;
  for (let i = 0; i < input.targets.length; i += 200) {
    await tx.insert(snippetDeploymentDevices).values(
      input.targets.slice(i, i + 200).map((t, j) => ({
        deploymentId: id,
        deviceId: t.deviceId,
        deviceName: t.deviceName,
        position: i + j,
        lines: t.lines,
        rollbackLines: t.rollbackLines,
      })),
    );
  }
  await advanceDeployment(tx, id, now, { trigger: input.trigger, requestedBy: input.requestedBy });
  return id;
}

const FAILED: readonly DeploymentDeviceStatus[] = ["failed", "error"];

/**
 * Moves a deployment on after a push ended (or at its start): queues the next pending devices while fewer than
 * `concurrency` are queued or running, holds the rest back until every canary device succeeded, and skips what
 * is left when a canary failed or, with stop_on_failure, when any push failed. The deployment finishes when no
 * device is pending or queued. Each push is a job of its own device, so a push never runs beside a download or
 * another push on that device (the claim in src/platform/jobs/queue.ts takes one running job per device).
 */
export async function advanceDeployment(
  tx: DbOrTx,
  deploymentId: number,
  now: Date,
  queueAs?: { trigger: JobTrigger; requestedBy: number | null },
): Promise<void> {
  const [deployment] = await tx.select().from(snippetDeployments).where(eq(snippetDeployments.id, deploymentId));
  if (!deployment || deployment.state === "finished") return;
  // Counts and only the rows it acts on: this runs in the write transaction of every finished push, so reading
  // all of a large deployment's rows each time would make a deployment's cost grow with its size squared.
  const ofDeployment = eq(snippetDeploymentDevices.deploymentId, deploymentId);
  const byStatus = new Map(
    (
      await tx
        .select({ status: snippetDeploymentDevices.status, n: sql<number>`count(*)` })
        .from(snippetDeploymentDevices)
        .where(ofDeployment)
        .groupBy(snippetDeploymentDevices.status)
    ).map((r) => [r.status, Number(r.n)]),
  );
  const open = byStatus.get("queued") ?? 0;
  const pending = byStatus.get("pending") ?? 0;
  const failed = FAILED.reduce((n, status) => n + (byStatus.get(status) ?? 0), 0);
  const canary = deployment.canary
    ? await tx
        .select({ status: snippetDeploymentDevices.status })
        .from(snippetDeploymentDevices)
        .where(and(ofDeployment, sql`${snippetDeploymentDevices.position} < ${deployment.canary}`))
    : [];
  const stopReason = canary.some((r) => FAILED.includes(r.status))
    ? `a canary device failed (${canary.filter((r) => FAILED.includes(r.status)).length} of ${canary.length}); the rest were not pushed`
    : deployment.stopOnFailure && failed > 0
      ? "a push failed and stop_on_failure is set; the rest were not pushed"
      : null;
  if (stopReason && pending) {
    const skipped = await tx
      .update(snippetDeploymentDevices)
      .set({ status: "skipped", message: stopReason, finishedAt: now })
      .where(and(ofDeployment, eq(snippetDeploymentDevices.status, "pending")))
      .returning({ deviceId: snippetDeploymentDevices.deviceId });
    if (deployment.taskRunId !== null) {
      await tx
        .update(taskRunItems)
        .set({ skipReason: stopReason })
        .where(
          and(
            eq(taskRunItems.runId, deployment.taskRunId),
            inArray(
              taskRunItems.deviceId,
              skipped.flatMap((r) => (r.deviceId === null ? [] : [r.deviceId])),
            ),
          ),
        );
    }
    await tx
      .update(snippetDeployments)
      .set({ stoppedReason: stopReason })
      .where(eq(snippetDeployments.id, deploymentId));
  } else if (!stopReason) {
    const canaryDone = canary.every((r) => r.status === "success");
    // Until every canary succeeded, only canary devices may be queued.
    const room = Math.max(0, deployment.concurrency - open);
    const next =
      room && pending
        ? await tx
            .select({ id: snippetDeploymentDevices.id, deviceId: snippetDeploymentDevices.deviceId })
            .from(snippetDeploymentDevices)
            .where(
              and(
                ofDeployment,
                eq(snippetDeploymentDevices.status, "pending"),
                canaryDone ? undefined : sql`${snippetDeploymentDevices.position} < ${deployment.canary}`,
              ),
            )
            .orderBy(asc(snippetDeploymentDevices.position))
            .limit(room)
        : [];
    for (const row of next)
      await queuePush(
        tx,
        row,
        deployment.taskRunId,
        now,
        queueAs ?? { trigger: deployment.taskRunId === null ? "api" : "schedule", requestedBy: deployment.requestedBy },
      );
    if (next.length || open || pending) return;
  }
  const stillOpen = await tx
    .select({ n: sql<number>`count(*)` })
    .from(snippetDeploymentDevices)
    .where(
      and(
        eq(snippetDeploymentDevices.deploymentId, deploymentId),
        inArray(snippetDeploymentDevices.status, ["pending", "queued"]),
      ),
    );
  if (Number(stillOpen[0]?.n)) return;
  const [finished] = await tx
    .update(snippetDeployments)
    .set({ state: "finished", finishedAt: now })
    .where(and(eq(snippetDeployments.id, deploymentId), eq(snippetDeployments.state, "running")))
    .returning({
      id: snippetDeployments.id,
      snippetId: snippetDeployments.snippetId,
      snippetName: snippetDeployments.snippetName,
    });
  if (finished) await recordDeploymentFinished(tx, finished, now);
}

/** snippet.deployment.finished, written with the deployment's last change. */
async function recordDeploymentFinished(
  tx: DbOrTx,
  d: { id: number; snippetId: number | null; snippetName: string },
  now: Date,
): Promise<void> {
  const tallies = await tx
    .select({ status: snippetDeploymentDevices.status, n: sql<number>`count(*)` })
    .from(snippetDeploymentDevices)
    .where(eq(snippetDeploymentDevices.deploymentId, d.id))
    .groupBy(snippetDeploymentDevices.status);
  const n = (...statuses: string[]) =>
    tallies.filter((t) => statuses.includes(t.status)).reduce((sum, t) => sum + Number(t.n), 0);
  await recordEvent(
    tx,
    "snippet.deployment.finished",
    {
      deployment_id: d.id,
      snippet_id: d.snippetId,
      snippet_name: d.snippetName,
      summary: {
        total: n(...DEPLOYMENT_DEVICE_STATUSES),
        succeeded: n("success"),
        failed: n("failed", "error"),
        skipped: n("skipped"),
      },
    },
    now,
  );
}

async function queuePush(
  tx: DbOrTx,
  row: { id: number; deviceId: number | null },
  taskRunId: number | null,
  now: Date,
  as: { trigger: JobTrigger; requestedBy: number | null },
): Promise<void> {
  if (row.deviceId === null) {
    await tx
      .update(snippetDeploymentDevices)
      .set({ status: "skipped", message: "the device was deleted", finishedAt: now })
      .where(eq(snippetDeploymentDevices.id, row.id));
    return;
  }
  // A push is never retried by the queue: lines half-applied must not be sent again unasked.
  const [job] = await tx
    .insert(jobs)
    .values({
      type: "snippet_push",
      deviceId: row.deviceId,
      trigger: as.trigger,
      priority: PRIORITY.api,
      requestedBy: as.requestedBy,
      maxAttempts: 1,
      params: { deployment_device_id: row.id },
      runAfter: now,
      createdAt: now,
    })
    .returning({ id: jobs.id });
  await tx
    .update(snippetDeploymentDevices)
    .set({ status: "queued", jobId: job!.id })
    .where(eq(snippetDeploymentDevices.id, row.id));
  // A task run's item shows its push once queued; until then the run stays open (see completePushJob).
  if (taskRunId !== null)
    await tx
      .update(taskRunItems)
      .set({ jobId: job!.id })
      .where(and(eq(taskRunItems.runId, taskRunId), eq(taskRunItems.deviceId, row.deviceId)));
}

/** How one device's push ended, as the collector reports it. */
export type PushEnd = {
  status: "success" | "failed" | "error";
  /** The job's outcome: success, error for a refused line, or what kept the session from working (auth_failed ...). */
  outcome: JobOutcome;
  message: string;
  result: Record<string, unknown>;
  transcript: string;
};

/** Records one device's push and moves its deployment on; in the transaction that completes the push job. */
export async function finishDeploymentDevice(
  tx: DbOrTx,
  deploymentDeviceId: number,
  end: PushEnd,
  now: Date,
): Promise<void> {
  const [row] = await tx
    .update(snippetDeploymentDevices)
    .set({ status: end.status, message: end.message, result: end.result, transcript: end.transcript, finishedAt: now })
    .where(eq(snippetDeploymentDevices.id, deploymentDeviceId))
    .returning({ deploymentId: snippetDeploymentDevices.deploymentId });
  if (row) await advanceDeployment(tx, row.deploymentId, now);
}

/**
 * The collector's end of a push: the job's outcome and the device's result in one transaction guarded by the
 * lease, then the deployment moved on. False when the lease was lost (nothing is written). `finish` ends the job:
 * the tasks module's finishJob, which also settles the task run a snippet task's push belongs to (passed in, as
 * tasks start snippet deployments and snippets do not know tasks).
 */
export async function completePushJob(
  db: Db,
  job: Pick<Job, "id" | "attempts" | "maxAttempts" | "params">,
  owner: string,
  end: PushEnd,
  now: Date,
  finish: (
    tx: DbOrTx,
    job: Pick<Job, "id" | "attempts" | "maxAttempts">,
    owner: string,
    end: JobEnd,
    now: Date,
  ) => Promise<JobCompletion>,
): Promise<boolean> {
  const deploymentDeviceId = Number(job.params?.deployment_device_id);
  const lost = new Error("lease lost");
  try {
    return await db.transaction(async (tx) => {
      // The deployment moves on first, so the next pushes are queued before completing this job settles its task
      // run: a run with pushes still to come is not finished.
      await finishDeploymentDevice(tx, deploymentDeviceId, end, now);
      const { recorded } = await finish(
        tx,
        { ...job, maxAttempts: 1 },
        owner,
        {
          outcome: end.outcome,
          message: end.message,
          result: { ...end.result, deployment_device_id: deploymentDeviceId },
        },
        now,
      );
      if (!recorded) throw lost;
      return true;
    });
  } catch (err) {
    if (err === lost) return false;
    throw err;
  }
}

/**
 * Ends the pushes whose job is gone (deleting a device deletes its jobs) or finished without recording the push
 * (a collector that could not write its result ends the job alone), and moves their deployments on, so a
 * deployment never waits for a push that cannot come. Called on every scheduler pass, as settleFinishedRuns is.
 */
export async function settleOrphanedPushes(db: DbOrTx, now: Date): Promise<number> {
  // A read first: usually nothing is orphaned and no lock is needed.
  const orphaned = await db
    .select({
      id: snippetDeploymentDevices.id,
      deploymentId: snippetDeploymentDevices.deploymentId,
      jobMessage: jobs.message,
    })
    .from(snippetDeploymentDevices)
    .leftJoin(jobs, eq(jobs.id, snippetDeploymentDevices.jobId))
    .where(and(eq(snippetDeploymentDevices.status, "queued"), or(isNull(jobs.id), eq(jobs.state, "finished"))));
  for (const row of orphaned) {
    const message = row.jobMessage
      ? `the push's job ended without recording the push: ${row.jobMessage}`
      : "the push's job was deleted (with its device) before it ran";
    await db
      .update(snippetDeploymentDevices)
      .set({ status: "error", message, finishedAt: now })
      .where(eq(snippetDeploymentDevices.id, row.id));
  }
  for (const deploymentId of new Set(orphaned.map((r) => r.deploymentId)))
    await advanceDeployment(db, deploymentId, now);
  return orphaned.length;
}
