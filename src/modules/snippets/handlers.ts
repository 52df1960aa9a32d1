import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { getJob } from "../../platform/jobs/queue.ts";
import { serializeJob, waitForJob } from "../jobs/index.ts";
import {
  deploymentDeviceListSpec,
  deploymentDevicesOf,
  deploymentListSpec,
  getDeployment,
  listDeploymentDevices,
  listDeployments,
  visibleDeployments,
  type Links,
} from "./deployment-views.ts";
import { type DeployActor, deploySnippet, sendSnippet } from "./deploy.ts";
import { type Snippet, snippetsResource } from "./resource.ts";
import { createRemediationSnippet } from "./remediation.ts";
import {
  deploySnippetRoute,
  getDeploymentRoute,
  listDeploymentDevicesRoute,
  listDeploymentsRoute,
  remediationSnippetRoute,
  sendSnippetRoute,
} from "./routes.ts";

const linksOf = (c: Context<AppEnv>): Links => ({
  base: new URL(c.req.url).origin,
  version: c.req.path.split("/")[2]!,
});

const actor = (c: Context<AppEnv>): DeployActor => ({
  db: c.var.services.db,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
  jobsQueued: c.var.services.jobsQueued,
});

export function registerSnippetRoutes(app: OpenAPIHono<AppEnv>) {
  // Before the resource's /snippets/{id} routes, as every static path is.
  app.openapi(sendSnippetRoute, async (c) => {
    const { db } = c.var.services;
    const answer = await sendSnippet(actor(c), c.req.valid("param").id, c.req.valid("json"));
    if ("dryRun" in answer) return c.json({ data: answer.dryRun }, 200);
    const wait = c.req.valid("query").wait ?? 0;
    const job =
      wait > 0 ? await waitForJob(db, answer.jobId, wait, c.req.raw.signal) : (await getJob(db, answer.jobId))!;
    const links = linksOf(c);
    const data = {
      ...serializeJob(c, job),
      deployment_id: answer.deploymentId,
      deployment_url: `${links.base}/api/${links.version}/snippet-deployments/${answer.deploymentId}`,
    };
    if (job.state === "finished") return c.json({ data }, 200);
    c.header("Location", data.status_url);
    return c.json({ data }, 202);
  });

  app.openapi(deploySnippetRoute, async (c) => {
    const { db } = c.var.services;
    const answer = await deploySnippet(actor(c), c.req.valid("param").id, c.req.valid("json"));
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
  app.openapi(remediationSnippetRoute, async (c) => {
    const data = await createRemediationSnippet(
      c.var.services,
      c.var.auth,
      c.req.valid("param").id,
      c.req.valid("json").name,
    );
    c.header("Location", new URL(`/api/${c.req.path.split("/")[2]}/snippets/${data.id}`, c.req.url).toString());
    return c.json({ data: data as z.infer<typeof Snippet> }, 201);
  });
}
