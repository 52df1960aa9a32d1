import { eq, inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { taskRuns, tasks } from "../../db/schema/index.ts";
import { recordEvents } from "../../platform/outbox/record.ts";
import { runOutcomeCounts } from "./runs.ts";

/** task.run.finished for runs that just finished, written in the transaction that finished them. */
export async function recordRunsFinished(tx: DbOrTx, runIds: number[], now: Date): Promise<void> {
  if (!runIds.length) return;
  const rows = await tx
    .select({ runId: taskRuns.id, taskId: tasks.id, taskName: tasks.name, notify: tasks.notifyOnFailure })
    .from(taskRuns)
    .innerJoin(tasks, eq(tasks.id, taskRuns.taskId))
    .where(inArray(taskRuns.id, runIds));
  const counts = await runOutcomeCounts(tx, runIds);
  for (const [runId, c] of counts)
    await tx
      .update(taskRuns)
      .set({ counts: Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Number(v)])) })
      .where(eq(taskRuns.id, runId));
  await recordEvents(
    tx,
    rows.map((r) => {
      const c = counts.get(r.runId);
      const n = (k: "queued" | "running" | "succeeded" | "unchanged" | "failed" | "skipped") => Number(c?.[k] ?? 0);
      return {
        type: "task.run.finished" as const,
        payload: {
          task_id: r.taskId,
          task_name: r.taskName,
          run_id: r.runId,
          notify_on_failure: r.notify,
          summary: {
            total: n("queued") + n("running") + n("succeeded") + n("unchanged") + n("failed") + n("skipped"),
            succeeded: n("succeeded"),
            unchanged: n("unchanged"),
            failed: n("failed"),
            skipped: n("skipped"),
          },
        },
      };
    }),
    now,
  );
}
