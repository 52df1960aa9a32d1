import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { firstPageQuery, listEnvelope, parseListQuery } from "../../../platform/http/list.ts";
import {
  getRun,
  itemListSpec,
  lastRunFailures,
  listItems,
  listTaskRuns,
  runListSpec,
  runReportCsv,
} from "../../../modules/tasks/index.ts";
import type { TaskRunOut } from "../../../modules/tasks/index.ts";
import { listTasks, mayChangeTask, runTaskNow, showTask, taskListSpec } from "../../../modules/tasks/index.ts";
import { taskCtxOf } from "./task-context.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { checkedForm, csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { LastRunFailures } from "./task-failures.tsx";

/** Runs listed on a task's page; the API lists them all (GET /api/v2/tasks/{id}/runs). */
const RUNS_SHOWN = 20;
/** Failures of the last run listed on a task's page; the run's devices filtered by status have them all. */
const FAILURES_SHOWN = 20;

const ctxOf = taskCtxOf;

const at = (iso: string | null, none = "") => <Time at={iso ? new Date(iso) : null} none={none} />;

const RunStatus = (props: { status: string }) => <span class={`badge run-${props.status}`}>{props.status}</span>;

/** Run now, pause or resume, and edit: for roles with tasks.write (the service still refuses a task beyond the scope). */
function RunNow(props: {
  c: Context<WebEnv>;
  taskId: number;
  paused?: boolean;
  edit?: boolean;
  deletable?: boolean;
  mayChange: boolean;
}) {
  if (!props.c.var.auth.abilities.has("tasks.write") || !props.mayChange) return null;
  const csrf = props.c.var.session.csrfToken;
  return (
    <>
      <CsrfForm action={`/tasks/${props.taskId}/run`} csrf={csrf} class="inline">
        <button type="submit" class="secondary">
          Run now
        </button>
      </CsrfForm>{" "}
      {props.paused !== undefined && (
        <CsrfForm action={`/tasks/${props.taskId}/${props.paused ? "resume" : "pause"}`} csrf={csrf} class="inline">
          <button type="submit" class="secondary">
            {props.paused ? "Resume" : "Pause"}
          </button>
        </CsrfForm>
      )}{" "}
      {props.edit && (
        <a class="button secondary" href={`/tasks/${props.taskId}/edit`}>
          Edit
        </a>
      )}{" "}
      {props.deletable && (
        <a class="button danger" href={`/tasks/${props.taskId}/delete`}>
          Delete
        </a>
      )}
    </>
  );
}

/** Only these words come back through an address. */
const DONE: Record<string, string> = {
  created: "Task created.",
  saved: "Changes saved.",
  paused: "Task paused: it does not run on its schedule (Run now still works).",
  resumed: "Task resumed: its schedule starts from now.",
};

function RunCounts(props: { run: TaskRunOut }) {
  const { counts, progress } = props.run;
  return props.run.finished_at
    ? `${counts.succeeded} succeeded, ${counts.unchanged} unchanged, ${counts.failed} failed, ${counts.skipped} skipped`
    : `${progress.finished} of ${progress.total} done (${progress.running} running, ${progress.queued} queued)`;
}

/**
 * Tasks: the API's task list (next runs, last run) and a task's page with its runs and one run's per-device
 * outcomes; run now for roles with tasks.write. The same services and scope as /api/v2/tasks.
 */
export function registerTaskPages(web: Hono<WebEnv>): void {
  web.get("/tasks", requirePage("tasks.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, taskListSpec);
    const { total, rows } = await listTasks(ctxOf(c), q);
    const changeable = new Set(
      (
        await Promise.all(
          rows.map(async (t) => ((await mayChangeTask(c.var.services.db, c.var.auth, t.id)) ? t.id : 0)),
        )
      ).filter(Boolean),
    );
    const { meta } = listEnvelope(c, q, total, rows);
    return renderPage(c, 200, {
      title: "Tasks",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Tasks</h1>
          {c.var.auth.abilities.has("tasks.write") && (
            <p class="actions">
              <a class="button" href="/tasks/new">
                New task
              </a>
            </p>
          )}
          <form method="get" action="/tasks" class="filters" role="search">
            <div class="field grow">
              <label for="task-search">Search</label>
              <input
                type="search"
                id="task-search"
                name="search"
                value={c.req.query("search") ?? ""}
                placeholder="Name or description"
              />
            </div>
            <div class="field">
              <button type="submit">Apply</button>
            </div>
          </form>
          <Pager c={c} meta={meta} noun="tasks" />
          <div class="table-wrap">
            <table class="tasks">
              <thead>
                <tr>
                  <th>Task</th>
                  <th>Type</th>
                  <th>Schedule</th>
                  <th>Next runs</th>
                  <th>Last run</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((t) => (
                  <tr>
                    <td>
                      <a href={`/tasks/${t.id}`}>{t.task_name}</a>
                      {t.is_system && <span class="badge">system</span>}
                    </td>
                    <td>{t.task_type}</td>
                    <td>
                      <code>{t.task_cron}</code> <span class="muted">{t.timezone}</span>
                      {t.is_paused && <span class="badge disabled">paused</span>}
                    </td>
                    <td>
                      {t.next_runs.length ? (
                        t.next_runs.map((r) => <div>{at(r)}</div>)
                      ) : (
                        <span class="muted">none</span>
                      )}
                    </td>
                    <td>
                      {t.last_run ? (
                        <>
                          <RunStatus status={t.last_run.status} /> {at(t.last_run.started_at)}
                        </>
                      ) : (
                        <span class="muted">never</span>
                      )}
                    </td>
                    <td>
                      <RunNow c={c} taskId={t.id} paused={t.is_paused} mayChange={changeable.has(t.id)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ),
    });
  });

  web.get("/tasks/:id", requirePage("tasks.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const ctx = ctxOf(c);
    const task = await showTask(ctx, pathId(c.req.param("id"), "Task"));
    const runs = await listTaskRuns(
      ctx.db,
      ctx.auth.scope,
      ctx.links,
      task.id,
      firstPageQuery(runListSpec(ctx.auth.scope), RUNS_SHOWN, "-id"),
    );
    const runParam = c.req.query("run");
    const chosen = runParam ? await getRun(ctx.db, ctx.auth.scope, ctx.links, pathId(runParam, "Run")) : runs.rows[0];
    // A run of another task named in the address is not this task's: as unknown.
    if (chosen && chosen.task_id !== task.id) throw ApiError.notFound(`Run ${chosen.id} of task ${task.id}`);
    const q = parseListQuery(c, itemListSpec);
    const [items, last] = await Promise.all([
      chosen ? listItems(ctx.db, ctx.auth.scope, ctx.links, chosen.id, q) : null,
      lastRunFailures(ctx.db, ctx.auth.scope, ctx.links, task.id, FAILURES_SHOWN),
    ]);
    return renderPage(c, 200, {
      title: task.task_name,
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <p class="muted">
              <a href="/tasks">Tasks</a>
            </p>
            <h1>{task.task_name}</h1>
            {DONE[c.req.query("done") ?? ""] && (
              <p class="alert success" role="status">
                {DONE[c.req.query("done") ?? ""]}
              </p>
            )}
            {task.task_desc && <p>{task.task_desc}</p>}
            <dl class="details">
              <dt>Type</dt>
              <dd>{task.task_type}</dd>
              <dt>Schedule</dt>
              <dd>
                <code>{task.task_cron}</code> ({task.timezone}){task.is_paused && " — paused"}
              </dd>
              <dt>Next runs</dt>
              <dd>{task.next_runs.length ? task.next_runs.map((r) => <div>{at(r)}</div>) : "none"}</dd>
            </dl>
            <div class="actions">
              <RunNow
                c={c}
                taskId={task.id}
                paused={task.is_paused}
                edit
                deletable={!task.is_system}
                mayChange={await mayChangeTask(ctx.db, ctx.auth, task.id)}
              />
            </div>
          </section>
          <section class="card" id="runs">
            <h2>Runs</h2>
            {runs.rows.length ? (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Run</th>
                      <th>Status</th>
                      <th>Trigger</th>
                      <th>Started</th>
                      <th>Finished</th>
                      <th>Devices</th>
                    </tr>
                  </thead>
                  <tbody>
                    {runs.rows.map((r) => (
                      <tr aria-current={chosen?.id === r.id ? "true" : undefined}>
                        <td>
                          <a href={`/tasks/${task.id}?run=${r.id}`}>{`#${r.id}`}</a>
                        </td>
                        <td>
                          <RunStatus status={r.status} />
                        </td>
                        <td>{r.trigger}</td>
                        <td>{at(r.started_at)}</td>
                        <td>{at(r.finished_at, "running")}</td>
                        <td>
                          <RunCounts run={r} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">The task has not run yet.</p>
            )}
          </section>
          <LastRunFailures taskId={task.id} {...last} deviceLinks={c.var.auth.abilities.has("devices.read")} />
          {chosen && items && (
            <section class="card" id="run-devices">
              <h2>
                {`Run #${chosen.id}: `}
                <RunStatus status={chosen.status} />
              </h2>
              <p>
                <RunCounts run={chosen} />
              </p>
              <p>
                <a href={`/task-runs/${chosen.id}/report.csv`} download>
                  Download the report (CSV)
                </a>{" "}
                <span class="muted">one line per device: outcome, error, duration, configuration versions</span>
              </p>
              <Pager c={c} meta={listEnvelope(c, q, items.total, items.rows).meta} noun="devices" />
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>Status</th>
                      <th>Outcome</th>
                      <th>Why</th>
                      <th>Finished</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.rows.map((i) => (
                      <tr>
                        <td>
                          {i.device_id && c.var.auth.abilities.has("devices.read") ? (
                            <a href={`/devices/${i.device_id}`}>{i.device_name}</a>
                          ) : (
                            (i.device_name ?? "")
                          )}
                        </td>
                        <td>
                          <span class={`badge item-${i.status}`}>{i.status}</span>
                        </td>
                        <td>{i.outcome ?? ""}</td>
                        <td>{i.error ?? i.message ?? ""}</td>
                        <td>{at(i.finished_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          )}
        </>
      ),
    });
  });

  // A run's report, as GET /task-runs/{id}/report.csv writes it: the devices the user may see, 404 beyond them.
  web.get("/task-runs/:id/report.csv", requirePage("tasks.read"), async (c) => {
    const ctx = ctxOf(c);
    const { filename, csv } = await runReportCsv(ctx.db, ctx.auth.scope, ctx.links, pathId(c.req.param("id"), "Run"));
    return c.body(csv, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${filename}"`,
    });
  });

  web.post("/tasks/:id/run", requirePage("tasks.write"), async (c) => {
    if (!(await checkedForm(c, c.var.session.csrfToken))) return csrfRefusal(c, c.var.session);
    const run = await runTaskNow(ctxOf(c), pathId(c.req.param("id"), "Task"));
    return c.redirect(`/tasks/${run.task_id}?run=${run.id}`, 303);
  });
}
