import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { and, desc, eq, sql } from "drizzle-orm";
import type { AppEnv } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { listEnvelope, parseListQuery } from "../../http/list.ts";
import { snippetDeploymentDevices, snippetDeployments, snippets } from "../../db/schema/index.ts";
import { getJob } from "../../jobs/queue.ts";
import { recordActivity } from "../activity/record.ts";
import { serializeJob, waitForJob } from "../jobs/handlers.ts";
import { createDeployment, type DeploymentOptions, type RenderedTarget } from "./deployments.ts";
import {
  deploymentDeviceListSpec,
  deploymentListSpec,
  getDeployment,
  serializeDeploymentDevice,
  serializeDeployments,
  visibleDeploymentDevices,
  visibleDeployments,
  type Links,
} from "./deployment-views.ts";
import { snippetsResource } from "./resource.ts";
import { registerRemediationRoute } from "./remediation.ts";
import {
  CONFIRM_ABOVE,
  deploySnippetRoute,
  getDeploymentRoute,
  listDeploymentDevicesRoute,
  listDeploymentsRoute,
  sendSnippetRoute,
} from "./routes.ts";
import { renderTargets, resolveTargets, type TargetLists } from "./targets.ts";

const linksOf = (c: Context<AppEnv>): Links => ({
  base: new URL(c.req.url).origin,
  version: c.req.path.split("/")[2]!,
});

async function loadSnippet(c: Context<AppEnv>, id: number) {
  const [snippet] = await c.var.services.db.select().from(snippets).where(eq(snippets.id, id));
  if (!snippet) throw ApiError.notFound(`Snippet ${id}`);
  return snippet;
}

const dryRunAnswer = (targets: RenderedTarget[]) => ({
  dry_run: true as const,
  device_count: targets.length,
  devices: targets.map((t) => ({
    device_id: t.deviceId,
    device_name: t.deviceName,
    lines: t.lines,
    rollback_lines: t.rollbackLines,
  })),
});

/** Renders for the targets, records the deployment and its first pushes, and logs who did it, in one transaction. */
async function start(
  c: Context<AppEnv>,
  snippet: typeof snippets.$inferSelect,
  kind: "send" | "deploy",
  targets: RenderedTarget[],
  options: DeploymentOptions,
) {
  const { db, clock } = c.var.services;
  const now = clock.now();
  return await db.transaction(async (tx) => {
    const id = await createDeployment(
      tx,
      { snippet, kind, targets, options, requestedBy: c.var.auth.userId, trigger: "api" },
      now,
    );
    await recordActivity(
      tx,
      c.var.auth,
      {
        action: `snippet.${kind}`,
        subjectType: "snippet",
        subjectId: snippet.id,
        after: {
          deployment_id: id,
          devices: targets.length,
          canary: options.canary,
          stop_on_failure: options.stopOnFailure,
          concurrency: options.concurrency,
        },
        reach: { devices: targets.map((t) => t.deviceId) },
      },
      now,
    );
    return id;
  });
}

export function registerSnippetRoutes(app: OpenAPIHono<AppEnv>) {
  // Before the resource's /snippets/{id} routes, as every static path is.
  app.openapi(sendSnippetRoute, async (c) => {
    const { db } = c.var.services;
    const snippet = await loadSnippet(c, c.req.valid("param").id);
    const body = c.req.valid("json");
    const [target] = await resolveTargets(db, c.var.auth.scope, {
      deviceIds: [body.device_id],
      categoryIds: [],
      tagIds: [],
    }).catch((err) => {
      if (err instanceof ApiError && err.status === 422) throw ApiError.notFound(`Device ${body.device_id}`);
      throw err;
    });
    if (!target) throw ApiError.conflict(`Device ${body.device_id} is disabled; enable it before pushing to it`);
    const rendered = renderTargets([target], snippet.content, snippet.rollbackContent, body.dynamic_vars ?? {});
    if (body.dry_run) return c.json({ data: dryRunAnswer(rendered) }, 200);
    const deploymentId = await start(c, snippet, "send", rendered, { canary: 0, stopOnFailure: false, concurrency: 1 });
    const [row] = await db
      .select({ jobId: snippetDeploymentDevices.jobId })
      .from(snippetDeploymentDevices)
      .where(eq(snippetDeploymentDevices.deploymentId, deploymentId));
    const wait = c.req.valid("query").wait ?? 0;
    const job = wait > 0 ? await waitForJob(db, row!.jobId!, wait, c.req.raw.signal) : (await getJob(db, row!.jobId!))!;
    const links = linksOf(c);
    const data = {
      ...serializeJob(c, job),
      deployment_id: deploymentId,
      deployment_url: `${links.base}/api/${links.version}/snippet-deployments/${deploymentId}`,
    };
    if (job.state === "finished") return c.json({ data }, 200);
    c.header("Location", data.status_url);
    return c.json({ data }, 202);
  });

  app.openapi(deploySnippetRoute, async (c) => {
    const { db } = c.var.services;
    const snippet = await loadSnippet(c, c.req.valid("param").id);
    const body = c.req.valid("json");
    const lists: TargetLists = {
      deviceIds: body.devices ?? [],
      categoryIds: body.categories ?? [],
      tagIds: body.tags ?? [],
    };
    const targets = await resolveTargets(db, c.var.auth.scope, lists);
    if (!targets.length)
      throw ApiError.validation({ devices: ["the devices, categories and tags given reach no enabled device"] });
    const rendered = renderTargets(targets, snippet.content, snippet.rollbackContent, body.dynamic_vars ?? {});
    if (body.dry_run) return c.json({ data: dryRunAnswer(rendered) }, 200);
    const n = rendered.length;
    if (body.confirm_device_count === undefined && n > CONFIRM_ABOVE) {
      throw ApiError.validation({
        confirm_device_count: [
          `the deploy reaches ${n} devices: more than ${CONFIRM_ABOVE} must be confirmed with confirm_device_count: ${n}`,
        ],
      });
    }
    if (body.confirm_device_count !== undefined && body.confirm_device_count !== n) {
      throw ApiError.validation({
        confirm_device_count: [
          `confirm_device_count is ${body.confirm_device_count} but the deploy reaches ${n} devices; check the targets (a dry run lists them)`,
        ],
      });
    }
    const canary = body.canary ?? 0;
    if (canary >= n && canary > 0)
      throw ApiError.validation({ canary: [`canary must be less than the ${n} devices the deploy reaches`] });
    const id = await start(c, snippet, "deploy", rendered, {
      canary,
      stopOnFailure: body.stop_on_failure ?? false,
      concurrency: body.concurrency ?? 10,
    });
    // The first pushes are committed: the collector beside the API starts them now, not at its next poll (send
    // wakes it through answerJob).
    c.var.services.jobsQueued();
    const data = await getDeployment(db, c.var.auth.scope, linksOf(c), id);
    c.header("Location", `${linksOf(c).base}/api/${linksOf(c).version}/snippet-deployments/${id}`);
    return c.json({ data }, 202);
  });

  app.openapi(listDeploymentsRoute, async (c) => {
    const { db } = c.var.services;
    const q = parseListQuery(c, deploymentListSpec, [visibleDeployments(c.var.auth.scope)]);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(snippetDeployments)
        .where(q.where)
        .orderBy(...q.orderBy, desc(snippetDeployments.id))
        .limit(q.perPage)
        .offset((q.page - 1) * q.perPage),
      db.select({ n: sql<number>`count(*)` }).from(snippetDeployments).where(q.where),
    ]);
    return c.json(
      listEnvelope(c, q, Number(total?.n ?? 0), await serializeDeployments(db, c.var.auth.scope, linksOf(c), rows)),
      200,
    );
  });

  app.openapi(getDeploymentRoute, async (c) =>
    c.json(
      { data: await getDeployment(c.var.services.db, c.var.auth.scope, linksOf(c), c.req.valid("param").id) },
      200,
    ),
  );

  app.openapi(listDeploymentDevicesRoute, async (c) => {
    const { db } = c.var.services;
    const id = c.req.valid("param").id;
    await getDeployment(db, c.var.auth.scope, linksOf(c), id);
    const q = parseListQuery(c, deploymentDeviceListSpec, [
      eq(snippetDeploymentDevices.deploymentId, id),
      visibleDeploymentDevices(c.var.auth.scope),
    ]);
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(snippetDeploymentDevices)
        .where(q.where)
        .orderBy(...q.orderBy)
        .limit(q.perPage)
        .offset((q.page - 1) * q.perPage),
      db.select({ n: sql<number>`count(*)` }).from(snippetDeploymentDevices).where(and(q.where)),
    ]);
    return c.json(listEnvelope(c, q, Number(total?.n ?? 0), rows.map(serializeDeploymentDevice)), 200);
  });

  snippetsResource.register(app);
  registerRemediationRoute(app);
}
