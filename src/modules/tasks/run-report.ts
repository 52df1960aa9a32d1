import type { DbOrTx } from "../../db/client.ts";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import { csvText } from "../devices/index.ts";
import { allItems, getRun, lastFinishedRun, type Links } from "./runs.ts";
import { visibleTask } from "./service.ts";

/** The report's columns, one line per device of the run (GET /task-runs/{id}/report.csv). */
export const RUN_REPORT_COLUMNS = [
  "run_id",
  "task_name",
  "device_id",
  "device_name",
  "status",
  "outcome",
  "error",
  "duration_ms",
  "attempts",
  "started_at",
  "finished_at",
  "job_id",
  "config_ids",
] as const;

/** A run's report as CSV, over the devices the caller may see; 404 for a run outside the scope. */
export async function runReportCsv(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  runId: number,
): Promise<{ filename: string; csv: string }> {
  const run = await getRun(db, scope, links, runId);
  const items = await allItems(db, scope, links, run.id);
  const cell = (v: unknown) => (v === null || v === undefined ? "" : String(v));
  const rows = items.map((i) =>
    [
      run.id,
      run.task_name,
      i.device_id,
      i.device_name,
      i.status,
      i.outcome,
      i.error,
      i.duration_ms,
      i.attempts,
      i.started_at,
      i.finished_at,
      i.job_id,
      i.config_ids.join(" "),
    ].map(cell),
  );
  return { filename: `task-run-${run.id}.csv`, csv: csvText([[...RUN_REPORT_COLUMNS], ...rows]) };
}

/**
 * A task's last finished run and the devices that failed in it (GET /tasks/{id}/last-run/failures); 404 for a
 * task the caller may not see. `limit` keeps a page short: the run's counts say how many failed in all.
 */
export async function lastRunFailures(db: DbOrTx, scope: DeviceScope, links: Links, taskId: number, limit?: number) {
  const task = await visibleTask(db, scope, taskId);
  const run = await lastFinishedRun(db, scope, links, task.id);
  const failures = run ? await allItems(db, scope, links, run.id, ["failed"], limit) : [];
  return { run, failures };
}
