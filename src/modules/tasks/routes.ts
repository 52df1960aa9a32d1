import { z } from "@hono/zod-openapi";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { itemListSpec, runListSpec } from "./runs.ts";
import { LastRunFailures, Task, TaskInput, TaskRun, TaskRunItem, TaskRunReport } from "./schemas.ts";
import { taskListSpec } from "./service.ts";

const tag = "Tasks";
const Id = pathIds("id");
const one = z.object({ data: Task });
const oneRun = z.object({ data: TaskRun });
// The run list's filters do not depend on the scope; only how they are built does.
const runQuery = listQuerySchema(runListSpec({ all: true }));

/** Why a scoped user gets 403 from a task they can see: said on every route that changes or runs one. */
const writeScopeNote =
  " A user whose role is scoped changes, pauses, resumes, runs or deletes only a task all of whose targets are in their scope " +
  "(devices they see, tags or categories their scope names; never a download_all or purge_configs task): another task they can see answers 403.";

const scopeNote =
  "A user whose role is scoped to some devices sees only the tasks that reach at least one of them, " +
  "and of those tasks only their devices (the retention purge, which reaches no device, is hidden from them)." +
  writeScopeNote;

export const listTasksRoute = apiRoute({
  method: "get",
  path: "/tasks",
  operationId: "listTasks",
  tag,
  ability: "tasks.read",
  summary: "List tasks",
  description: scopeNote,
  request: { query: listQuerySchema(taskListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Task), "A page of tasks") },
});

export const getTaskRoute = apiRoute({
  method: "get",
  path: "/tasks/{id}",
  operationId: "getTask",
  tag,
  ability: "tasks.read",
  summary: "Show a task",
  description: "With next_runs (the next three scheduled times, UTC) and last_run.",
  request: { params: Id },
  responses: { 200: jsonResponse(one, "The task") },
});

export const createTaskRoute = apiRoute({
  method: "post",
  path: "/tasks",
  operationId: "createTask",
  tag,
  ability: "tasks.write",
  summary: "Create a task",
  description:
    "task_cron is a 5-field cron expression (or an array of its 5 fields) read in timezone; an invalid one is a 422 naming the field at fault. " +
    "The target list the type uses (devices, categories or tags) must name existing records; the others must be empty. " +
    "A user whose role is scoped names only devices they see and tags or categories their scope names, and cannot create download_all " +
    "or purge_configs tasks (422): a task of theirs never reaches a device outside the scope.",
  request: jsonBody(TaskInput),
  responses: { 201: jsonResponse(one, "The created task; Location names its URL") },
});

export const replaceTaskRoute = apiRoute({
  method: "put",
  path: "/tasks/{id}",
  operationId: "replaceTask",
  tag,
  ability: "tasks.write",
  summary: "Replace a task",
  description:
    "Fields the body leaves out return to their defaults. A new cron expression or time zone, or un-pausing, restarts the schedule from now." +
    writeScopeNote,
  request: { params: Id, ...jsonBody(TaskInput) },
  responses: { 200: jsonResponse(one, "The updated task") },
});

export const updateTaskRoute = apiRoute({
  method: "patch",
  path: "/tasks/{id}",
  operationId: "updateTask",
  tag,
  ability: "tasks.write",
  summary: "Update some fields of a task",
  description:
    "Only the fields sent change. Changing task_type clears the target lists the new type does not use." +
    writeScopeNote,
  request: { params: Id, ...jsonBody(TaskInput.partial()) },
  responses: { 200: jsonResponse(one, "The updated task") },
});

export const deleteTaskRoute = apiRoute({
  method: "delete",
  path: "/tasks/{id}",
  operationId: "deleteTask",
  tag,
  ability: "tasks.write",
  summary: "Delete a task",
  description:
    "Deletes the task and its run history (the jobs and configurations its runs produced stay). System tasks answer 409: pause them instead." +
    writeScopeNote,
  request: { params: Id },
  responses: { 200: jsonResponse(MessageBody, "Deleted"), 409: jsonResponse(MessageBody, "A system task") },
});

export const runTaskRoute = apiRoute({
  method: "post",
  path: "/tasks/{id}/run",
  operationId: "runTask",
  tag,
  ability: "tasks.write",
  summary: "Run a task now",
  description:
    "Starts a manual run at once, even if the task is paused, and answers 202 with the run; poll its status_url (also in Location). " +
    "Devices are resolved now; disabled ones are skipped. A download already queued for a device is shared, not repeated." +
    writeScopeNote,
  request: { params: Id },
  responses: { 202: jsonResponse(oneRun, "The run, started") },
});

export const pauseTaskRoute = apiRoute({
  method: "post",
  path: "/tasks/{id}/pause",
  operationId: "pauseTask",
  tag,
  ability: "tasks.write",
  summary: "Pause a task's schedule",
  description: writeScopeNote.trim(),
  request: { params: Id },
  responses: { 200: jsonResponse(one, "The task, paused") },
});

export const resumeTaskRoute = apiRoute({
  method: "post",
  path: "/tasks/{id}/resume",
  operationId: "resumeTask",
  tag,
  ability: "tasks.write",
  summary: "Resume a task's schedule",
  description:
    "The schedule restarts from now: slots that passed while the task was paused are not caught up." + writeScopeNote,
  request: { params: Id },
  responses: { 200: jsonResponse(one, "The task, resumed") },
});

export const listTaskRunsRoute = apiRoute({
  method: "get",
  path: "/tasks/{id}/runs",
  operationId: "listTaskRunsOfTask",
  tag,
  ability: "tasks.read",
  summary: "List a task's runs",
  description: "Newest first; the same filters as GET /task-runs.",
  request: { params: Id, query: runQuery },
  responses: { 200: jsonResponse(listEnvelopeSchema(TaskRun), "A page of runs") },
});

export const lastRunFailuresRoute = apiRoute({
  method: "get",
  path: "/tasks/{id}/last-run/failures",
  operationId: "lastTaskRunFailures",
  tag,
  ability: "tasks.read",
  summary: "The devices that failed in a task's last finished run",
  description: "run is null when the task has not finished a run yet.",
  request: { params: Id },
  responses: { 200: jsonResponse(z.object({ data: LastRunFailures }), "The last finished run and its failed devices") },
});

export const listRunsRoute = apiRoute({
  method: "get",
  path: "/task-runs",
  operationId: "listTaskRuns",
  tag,
  ability: "tasks.read",
  summary: "List task runs",
  description:
    "Every task's runs, newest first: filter by task_id, status (running, succeeded, failed), trigger, started_after / started_before. " +
    "Counts cover the devices the caller may see; a scoped user sees only runs over their devices.",
  request: { query: runQuery },
  responses: { 200: jsonResponse(listEnvelopeSchema(TaskRun), "A page of runs") },
});

export const getRunRoute = apiRoute({
  method: "get",
  path: "/task-runs/{id}",
  operationId: "getTaskRun",
  tag,
  ability: "tasks.read",
  summary: "Show a task run",
  description:
    "Status, times, counts of devices by outcome, and progress (jobs queued / running / finished) while it runs.",
  request: { params: Id },
  responses: { 200: jsonResponse(oneRun, "The run") },
});

export const listRunDevicesRoute = apiRoute({
  method: "get",
  path: "/task-runs/{id}/devices",
  operationId: "listTaskRunDevices",
  tag,
  ability: "tasks.read",
  summary: "List a run's per-device outcomes",
  description:
    "Each device the run covered: status, outcome, duration, error, and the configuration versions its download produced.",
  request: { params: Id, query: listQuerySchema(itemListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(TaskRunItem), "A page of devices") },
});

export const runReportRoute = apiRoute({
  method: "get",
  path: "/task-runs/{id}/report",
  operationId: "getTaskRunReport",
  tag,
  ability: "tasks.read",
  summary: "A run's report as JSON",
  description: "The run and every device's outcome in one document.",
  request: { params: Id },
  responses: { 200: jsonResponse(z.object({ data: TaskRunReport }), "The report") },
});

export const runReportCsvRoute = apiRoute({
  method: "get",
  path: "/task-runs/{id}/report.csv",
  operationId: "downloadTaskRunReport",
  tag,
  ability: "tasks.read",
  summary: "A run's report as CSV",
  description: "One line per device, downloaded as task-run-<id>.csv.",
  request: { params: Id },
  responses: {
    200: {
      description:
        "CSV: run_id, task_name, device_id, device_name, status, outcome, error, duration_ms, attempts, started_at, finished_at, job_id, config_ids",
      content: { "text/csv": { schema: z.string() } },
    },
  },
});
