import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eq } from "drizzle-orm";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { snippetDeploymentDevices } from "../../db/schema/index.ts";
import { getJob } from "../../platform/jobs/queue.ts";
import { serializeJob, waitForJob } from "../jobs/index.ts";
import {
  deploymentDeviceListSpec,
  deploymentListSpec,
  getDeployment,
  deploymentDevicesOf,
  listDeploymentDevices,
  listDeployments,
  visibleDeployments,
  type Links,
} from "./deployment-views.ts";
import { deploySnippet, dryRunAnswer, loadSnippet, startDeployment } from "./deploy.ts";
import { snippetsResource } from "./resource.ts";
import { registerRemediationRoute } from "./remediation.ts";
import {
  deploySnippetRoute,
  getDeploymentRoute,
  listDeploymentDevicesRoute,
  listDeploymentsRoute,
  sendSnippetRoute,
} from "./routes.ts";
import { renderTargets, resolveTargets } from "./targets.ts";

const linksOf = (c: Context<AppEnv>): Links => ({
  base: new URL(c.req.url).origin,
  version: c.req.path.split("/")[2]!,
});

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
    const deploymentId = await startDeployment(c, snippet, "send", rendered, {
      canary: 0,
      stopOnFailure: false,
      concurrency: 1,
    });
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
    const answer = await deploySnippet(c, c.req.valid("param").id, c.req.valid("json"));
    if ("dryRun" in answer) return c.json({ data: answer.dryRun }, 200);
    const data = await getDeployment(db, c.var.auth.scope, linksOf(c), answer.deploymentId);
    c.header("Location", `${linksOf(c).base}/api/${linksOf(c).version}/snippet-deployments/${answer.deploymentId}`);
    return c.json({ data }, 202);
  });

  app.openapi(listDeploymentsRoute, async (c) => {
    const q = parseListQuery(c, deploymentListSpec, [visibleDeployments(c.var.auth.scope)]);
    const { total, rows } = await listDeployments(c.var.services.db, c.var.auth.scope, linksOf(c), q);
    return c.json(listEnvelope(c, q, total, rows), 200);
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
    const q = parseListQuery(c, deploymentDeviceListSpec, deploymentDevicesOf(id, c.var.auth.scope));
    const { total, rows } = await listDeploymentDevices(db, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  snippetsResource.register(app);
  registerRemediationRoute(app);
}
