import type { Context, Hono } from "hono";
import { deleteTask, mayChangeTask, showTask, type TaskOut } from "../../../modules/tasks/index.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import type { WebEnv } from "../env.ts";
import { taskCtxOf } from "../fleet/task-context.ts";
import { readForm } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

/** Why this caller may not delete the task, said before the button (none: they may). */
async function refusalOf(c: Context<WebEnv>, task: TaskOut): Promise<string | undefined> {
  if (task.is_system) return `'${task.task_name}' is a system task: pause it instead of deleting it.`;
  if (!(await mayChangeTask(c.var.services.db, c.var.auth, task.id)))
    return "The task reaches devices outside your scope: only a role that sees them may delete it.";
  return undefined;
}

function confirmPage(c: Context<WebEnv>, task: TaskOut, refusal?: string, status: 200 | 409 = 200) {
  return renderPage(c, status, {
    title: `Delete ${task.task_name}`,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href={`/tasks/${task.id}`}>{task.task_name}</a>
        </p>
        <h1>{`Delete the task ${task.task_name}?`}</h1>
        {refusal ? (
          <p class="alert error" role="alert">
            {refusal}
          </p>
        ) : (
          <>
            <p>Its schedule stops and its run history goes with it. This cannot be undone.</p>
            <CsrfForm action={`/tasks/${task.id}/delete`} csrf={c.var.session.csrfToken}>
              <div class="actions">
                <button type="submit" class="danger">
                  Delete the task
                </button>
                <a href={`/tasks/${task.id}`}>Cancel</a>
              </div>
            </CsrfForm>
          </>
        )}
      </section>
    ),
  });
}

/**
 * Deleting a task (DELETE /tasks/{id}) after a confirmation page, which says beforehand why it would be refused
 * (a system task, or one reaching devices outside the caller's scope). A task outside the scope is a 404.
 */
export function registerTaskDeletePages(web: Hono<WebEnv>): void {
  const write = requirePage("tasks.write");
  const taskOf = (c: Context<WebEnv>) => showTask(taskCtxOf(c), pathId(c.req.param("id")!, "Task"));

  web.get("/tasks/:id/delete", write, async (c) => {
    const task = await taskOf(c);
    return confirmPage(c, task, await refusalOf(c, task));
  });

  web.post("/tasks/:id/delete", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const task = await taskOf(c);
    try {
      await deleteTask(taskCtxOf(c), task.id);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 403))
        return confirmPage(c, task, err.message, 409);
      throw err;
    }
    return c.redirect("/tasks", 303);
  });
}
