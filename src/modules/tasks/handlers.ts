import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { allItems, getRun, itemListSpec, listItems, listRuns, listTaskRuns, runListSpec, type Links } from "./runs.ts";
import { lastRunFailures, runReportCsv } from "./run-report.ts";
import {
  createTaskRoute,
  deleteTaskRoute,
  getRunRoute,
  getTaskRoute,
  lastRunFailuresRoute,
  listRunDevicesRoute,
  listRunsRoute,
  listTaskRunsRoute,
  listTasksRoute,
  pauseTaskRoute,
  replaceTaskRoute,
  resumeTaskRoute,
  runReportCsvRoute,
  runReportRoute,
  runTaskRoute,
  updateTaskRoute,
} from "./routes.ts";
import {
  deleteTask,
  listTasks,
  runTaskNow,
  saveTask,
  setPaused,
  showTask,
  taskListSpec,
  visibleTask,
  type TaskCtx,
} from "./service.ts";

const linksOf = (c: Context<AppEnv>): Links => ({
  base: new URL(c.req.url).origin,
  version: c.req.path.split("/")[2]!,
});

const ctxOf = (c: Context<AppEnv>): TaskCtx => ({
  db: c.var.services.db,
  auth: c.var.auth,
  services: c.var.services,
  now: c.var.services.clock.now(),
  links: linksOf(c),
});

export function registerTaskRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listTasksRoute, async (c) => {
    const q = parseListQuery(c, taskListSpec);
    const { total, rows } = await listTasks(ctxOf(c), q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(getTaskRoute, async (c) => c.json({ data: await showTask(ctxOf(c), c.req.valid("param").id) }, 200));
  app.openapi(createTaskRoute, async (c) => {
    const data = await saveTask(ctxOf(c), c.req.valid("json"), null, "create");
    c.header("Location", new URL(`${c.req.path}/${data.id}`, c.req.url).toString());
    return c.json({ data }, 201);
  });
  app.openapi(replaceTaskRoute, async (c) =>
    c.json({ data: await saveTask(ctxOf(c), c.req.valid("json"), c.req.valid("param").id, "replace") }, 200),
  );
  app.openapi(updateTaskRoute, async (c) =>
    c.json({ data: await saveTask(ctxOf(c), c.req.valid("json"), c.req.valid("param").id, "patch") }, 200),
  );
  app.openapi(deleteTaskRoute, async (c) => {
    const id = c.req.valid("param").id;
    await deleteTask(ctxOf(c), id);
    return c.json({ message: `Task ${id} deleted` }, 200);
  });
  app.openapi(runTaskRoute, async (c) => {
    const run = await runTaskNow(ctxOf(c), c.req.valid("param").id);
    c.header("Location", run.status_url);
    return c.json({ data: run }, 202);
  });
  app.openapi(pauseTaskRoute, async (c) =>
    c.json({ data: await setPaused(ctxOf(c), c.req.valid("param").id, true) }, 200),
  );
  app.openapi(resumeTaskRoute, async (c) =>
    c.json({ data: await setPaused(ctxOf(c), c.req.valid("param").id, false) }, 200),
  );

  app.openapi(listTaskRunsRoute, async (c) => {
    const ctx = ctxOf(c);
    const task = await visibleTask(ctx.db, ctx.auth.scope, c.req.valid("param").id);
    const q = parseListQuery(c, runListSpec(ctx.auth.scope));
    const { total, rows } = await listTaskRuns(ctx.db, ctx.auth.scope, ctx.links, task.id, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(lastRunFailuresRoute, async (c) => {
    const ctx = ctxOf(c);
    return c.json({ data: await lastRunFailures(ctx.db, ctx.auth.scope, ctx.links, c.req.valid("param").id) }, 200);
  });

  app.openapi(listRunsRoute, async (c) => {
    const ctx = ctxOf(c);
    const q = parseListQuery(c, runListSpec(ctx.auth.scope));
    const { total, rows } = await listRuns(ctx.db, ctx.auth.scope, ctx.links, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(getRunRoute, async (c) => {
    const ctx = ctxOf(c);
    return c.json({ data: await getRun(ctx.db, ctx.auth.scope, ctx.links, c.req.valid("param").id) }, 200);
  });
  app.openapi(listRunDevicesRoute, async (c) => {
    const ctx = ctxOf(c);
    const run = await getRun(ctx.db, ctx.auth.scope, ctx.links, c.req.valid("param").id);
    const q = parseListQuery(c, itemListSpec);
    const { total, rows } = await listItems(ctx.db, ctx.auth.scope, ctx.links, run.id, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(runReportRoute, async (c) => {
    const ctx = ctxOf(c);
    const run = await getRun(ctx.db, ctx.auth.scope, ctx.links, c.req.valid("param").id);
    return c.json({ data: { run, devices: await allItems(ctx.db, ctx.auth.scope, ctx.links, run.id) } }, 200);
  });
  app.openapi(runReportCsvRoute, async (c) => {
    const ctx = ctxOf(c);
    const { filename, csv } = await runReportCsv(ctx.db, ctx.auth.scope, ctx.links, c.req.valid("param").id);
    return c.body(csv, 200, {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${filename}"`,
    });
  });
}
