import { asc, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { devices, taskRunItems, taskRuns, type tasks, type TaskRunTrigger } from "../../db/schema/index.ts";
import { enqueueDeviceJobs, enqueueJob, PRIORITY } from "../../platform/jobs/queue.ts";
import { taskTargetCondition } from "./targets.ts";
import { TASK_TYPE_DEFS } from "./types.ts";
import { startSnippetRun } from "./snippet-runs.ts";
import { recordRunsFinished } from "./run-events.ts";
import { deviceJobAttempts } from "../../platform/settings/service.ts";

export type Task = typeof tasks.$inferSelect;
export type TaskRun = typeof taskRuns.$inferSelect;

const ITEM_CHUNK = 5000;

/**
 * Starts a run of a task: the run row, one item per device the task reaches now (disabled devices are
 * skipped and say so) and their jobs, in the caller's transaction. A scheduled run whose (task, slot) row
 * already exists was started by another scheduler: nothing is written and undefined comes back, so only the
 * scheduler whose insert landed queues jobs.
 */
export async function startTaskRun(
  tx: DbOrTx,
  task: Task,
  run: { trigger: TaskRunTrigger; scheduledFor: Date | null; missedSlots?: number; requestedBy?: number | null },
  now: Date,
): Promise<TaskRun | undefined> {
  const [created] = await tx
    .insert(taskRuns)
    .values({
      taskId: task.id,
      taskType: task.type,
      trigger: run.trigger,
      scheduledFor: run.scheduledFor,
      missedSlots: run.missedSlots ?? 0,
      requestedBy: run.requestedBy ?? null,
      startedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (!created) return undefined;

  const def = TASK_TYPE_DEFS[task.type];
  const jobTrigger = run.trigger === "manual" ? "api" : "schedule";
  const priority = run.trigger === "manual" ? PRIORITY.api : PRIORITY.scheduled;
  let jobs = 0;
  if (task.type === "snippet") {
    jobs = await startSnippetRun(
      tx,
      task,
      created.id,
      { trigger: jobTrigger, requestedBy: run.requestedBy ?? null },
      now,
    );
  } else if (def.targets === "none") {
    const job = await enqueueJob(
      tx,
      {
        type: def.job,
        trigger: jobTrigger,
        priority,
        requestedBy: run.requestedBy,
        ...(task.type === "discovery_scan" ? { params: { preset_id: task.scanPresetId } } : {}),
      },
      now,
    );
    await tx.insert(taskRunItems).values({ runId: created.id, jobId: job.id });
    jobs = 1;
  } else {
    const targets = await tx
      .select({ id: devices.id, name: devices.name, enabled: devices.enabled })
      .from(devices)
      .where(taskTargetCondition(task))
      .orderBy(asc(devices.id));
    const enabled = targets.filter((d) => d.enabled).map((d) => d.id);
    const jobOf = await enqueueDeviceJobs(
      tx,
      {
        type: def.job,
        deviceIds: enabled,
        trigger: jobTrigger,
        priority,
        requestedBy: run.requestedBy,
        maxAttempts: await deviceJobAttempts(tx),
      },
      now,
    );
    const items = targets.map((d) => ({
      runId: created.id,
      deviceId: d.id,
      deviceName: d.name,
      jobId: jobOf.get(d.id) ?? null,
      skipReason: d.enabled ? null : "disabled",
    }));
    // As JSON, one statement a chunk: bound values a row through drizzle's builder took most of the fan-out.
    for (let i = 0; i < items.length; i += ITEM_CHUNK)
      await tx.run(sql`insert into ${taskRunItems} (run_id, device_id, device_name, job_id, skip_reason)
        select ${created.id}, value ->> '$[0]', value ->> '$[1]', value ->> '$[2]', value ->> '$[3]'
        from json_each(${JSON.stringify(items.slice(i, i + ITEM_CHUNK).map((t) => [t.deviceId, t.deviceName, t.jobId, t.skipReason]))})`);
    jobs = enabled.length;
  }
  if (jobs === 0) {
    await tx.update(taskRuns).set({ finishedAt: now }).where(eq(taskRuns.id, created.id));
    created.finishedAt = now;
    await recordRunsFinished(tx, [created.id], now);
  }
  return created;
}
