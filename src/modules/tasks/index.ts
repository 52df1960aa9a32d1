// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { registerTaskRoutes } from "./handlers.ts";
export {
  getRun,
  itemListSpec,
  latestRuns,
  listItems,
  listRuns,
  listTaskRuns,
  runListSpec,
  runOutcomeCounts,
} from "./runs.ts";
export type { Links } from "./runs.ts";
export { lastRunFailures, runReportCsv } from "./run-report.ts";
export { RunSummary, TaskInput } from "./schemas.ts";
export type { TaskOut, TaskRunItemOut, TaskRunOut } from "./schemas.ts";
export {
  deleteTask,
  listTasks,
  mayChangeTask,
  runTaskNow,
  saveTask,
  setPaused,
  showTask,
  taskListSpec,
} from "./service.ts";
export type { TaskCtx } from "./service.ts";
export { finishJob, settleFinishedRuns } from "./settle.ts";
export { startTaskRun } from "./start-run.ts";
export type { Task, TaskRun } from "./start-run.ts";
export { seedSystemTasks } from "./system-tasks.ts";
export { visibleItems, visibleTasks } from "./targets.ts";
export { TASK_TYPE_DEFS, TASK_TYPES } from "./types.ts";
export type { TaskType } from "./types.ts";
