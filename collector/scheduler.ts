import { and, eq, isNotNull, max } from "drizzle-orm";
import type { Clock } from "../src/kernel/clock.ts";
import type { Db, DbOrTx } from "../src/db/client.ts";
import { taskRuns, tasks } from "../src/db/schema/index.ts";
import { settleFinishedRuns } from "../src/modules/tasks/index.ts";
import { settleOrphanedPushes } from "../src/modules/snippets/index.ts";
import type { Logger } from "../src/kernel/logger.ts";
import { dueSlots, hasDueSlot } from "../src/kernel/cron.ts";
import { startTaskRun, type Task, type TaskRun } from "../src/modules/tasks/index.ts";
import { describeError } from "./errors.ts";
import { startPollingLoop } from "./polling-loop.ts";

export type SchedulerDeps = {
  db: Db;
  clock: Clock;
  logger: Logger /** Called after each pass that completed (the scheduler's heartbeat). */;
  passed?: () => Promise<void>;
};

export type SchedulerOptions = {
  /** How often the scheduler looks for due slots (and for tasks changed through the API). */
  intervalMs: number;
  /**
   * A slot started later than this (a collector restarted, or none ran) counts as missed: its run says
   * trigger "catch_up". Within it, a lone due slot is an ordinary scheduled run.
   */
  graceMs: number;
};

export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = { intervalMs: 10_000, graceMs: 2 * 60_000 };

const later = (a: Date, b: Date | null) => (b && b.getTime() > a.getTime() ? b : a);

async function lastScheduledSlot(db: DbOrTx, taskId: number): Promise<Date | null> {
  const [row] = await db
    .select({ last: max(taskRuns.scheduledFor) })
    .from(taskRuns)
    .where(and(eq(taskRuns.taskId, taskId), isNotNull(taskRuns.scheduledFor)));
  return row?.last ?? null;
}

/**
 * Starts the run a task is due, if any: the latest slot after its last scheduled run (or after it was
 * created, resumed or rescheduled). Several slots due at once (nothing ran while they passed) make one
 * catch_up run for the latest, never one per slot. Decided inside the write transaction and keyed by
 * (task, slot), so of several schedulers only one starts it.
 */
async function startDueRun(
  deps: SchedulerDeps,
  options: SchedulerOptions,
  taskId: number,
  now: Date,
): Promise<TaskRun | undefined> {
  return deps.db.transaction(async (tx) => {
    const [task] = await tx.select().from(tasks).where(eq(tasks.id, taskId));
    if (!task || task.paused) return undefined;
    const due = dueSlots(task, later(task.scheduleFrom, await lastScheduledSlot(tx, task.id)), now);
    if (!due) return undefined;
    const late = due.count > 1 || now.getTime() - due.latest.getTime() > options.graceMs;
    return startTaskRun(
      tx,
      task,
      { trigger: late ? "catch_up" : "schedule", scheduledFor: due.latest, missedSlots: late ? due.count : 0 },
      now,
    );
  });
}

/**
 * One pass: marks finished the runs whose jobs are all done, then starts every due run. Returns the runs
 * this scheduler started (another scheduler may have started others).
 */
export async function scheduleDueRuns(
  deps: SchedulerDeps,
  options: SchedulerOptions = DEFAULT_SCHEDULER_OPTIONS,
): Promise<TaskRun[]> {
  const now = deps.clock.now();
  await settleFinishedRuns(deps.db, now);
  await settleOrphanedPushes(deps.db, now);
  const active: Task[] = await deps.db.select().from(tasks).where(eq(tasks.paused, false));
  const started: TaskRun[] = [];
  for (const task of active) {
    try {
      // A read first: most passes find nothing due and take no write lock.
      if (!hasDueSlot(task, later(task.scheduleFrom, await lastScheduledSlot(deps.db, task.id)), now)) continue;
      const run = await startDueRun(deps, options, task.id, now);
      if (!run) continue;
      started.push(run);
      deps.logger.info("task run started", {
        task: task.id,
        run: run.id,
        trigger: run.trigger,
        scheduled_for: run.scheduledFor?.toISOString(),
        ...(run.missedSlots ? { missed_slots: run.missedSlots } : {}),
      });
    } catch (err) {
      deps.logger.error("could not start a task run; retrying next pass", { task: task.id, error: describeError(err) });
    }
  }
  return started;
}

/** Runs scheduleDueRuns every intervalMs until stopped. */
export function startScheduler(deps: SchedulerDeps, options: SchedulerOptions = DEFAULT_SCHEDULER_OPTIONS) {
  return startPollingLoop({
    logger: deps.logger,
    failureMessage: "scheduler pass failed; retrying",
    intervalMs: options.intervalMs,
    async pass() {
      await scheduleDueRuns(deps, options);
      await deps.passed?.();
      return undefined;
    },
  });
}
