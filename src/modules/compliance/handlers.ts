import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { answerJob } from "../jobs/index.ts";
import { copyPolicy, runAssignment, runPolicy } from "./actions.ts";
import { exportResults } from "./export.ts";
import { assignmentsResource, policiesResource } from "./resource.ts";
import type { Policy } from "./schemas.ts";
import { deviceCompliance, getResult, listResults, resultListSpec } from "./results.ts";
import {
  copyPolicyRoute,
  deviceComplianceRoute,
  exportResultsRoute,
  getResultRoute,
  listResultsRoute,
  runAssignmentRoute,
  runPolicyRoute,
  trendsRoute,
} from "./routes.ts";
import { complianceTrends } from "./trends.ts";

/** Policies, assignments and results: the routes both versions share. */
export function registerComplianceRoutes(app: OpenAPIHono<AppEnv>): void {
  // Static paths first: /policy-compliance/trends must not be read as a result id.
  app.openapi(trendsRoute, async (c) =>
    c.json(
      {
        data: await complianceTrends(
          c.var.services.db,
          c.var.auth.scope,
          c.req.valid("query"),
          c.var.services.clock.now(),
        ),
      },
      200,
    ),
  );
  app.openapi(listResultsRoute, async (c) => {
    const q = parseListQuery(c, resultListSpec);
    const { total, rows } = await listResults(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(getResultRoute, async (c) =>
    c.json({ data: await getResult(c.var.services.db, c.var.auth.scope, c.req.valid("param").id) }, 200),
  );
  app.openapi(deviceComplianceRoute, async (c) =>
    c.json({ data: await deviceCompliance(c.var.services.db, c.var.auth.scope, c.req.valid("param").id) }, 200),
  );

  policiesResource.register(app);
  app.openapi(copyPolicyRoute, async (c) => {
    const id = c.req.valid("param").id;
    const body = (c.req.valid("json") ?? {}) as { name?: string };
    const data = await copyPolicy(c.var, id, body.name);
    c.header("Location", new URL(`${c.req.path.replace(/\/\d+\/copy$/, "")}/${data.id}`, c.req.url).toString());
    return c.json({ data: data as z.infer<typeof Policy> }, 201);
  });
  app.openapi(runPolicyRoute, async (c) => {
    return answerJob(c, await runPolicy(c.var, c.req.valid("param").id), c.req.valid("query").wait ?? 0);
  });

  assignmentsResource.register(app);
  app.openapi(runAssignmentRoute, async (c) => {
    return answerJob(c, await runAssignment(c.var, c.req.valid("param").id), c.req.valid("query").wait ?? 0);
  });
}

/** v2's streamed export of results. */
export function registerComplianceExportRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(exportResultsRoute, async (c) => {
    const format = c.req.valid("query").format ?? "csv";
    const q = parseListQuery(c, resultListSpec);
    const body = await exportResults(c.var.services.db, c.var.auth.scope, q, format);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="policy-compliance-${date}.${format}"`,
    });
  });
}
