import type { OpenAPIHono, z } from "@hono/zod-openapi";
import { nameKey } from "../../db/name-key.ts";
import type { Context } from "hono";
import { eq } from "drizzle-orm";
import { policies } from "../../db/schema/index.ts";
import type { AppEnv } from "../../http/env.ts";
import { ApiError, FieldErrorBag } from "../../http/errors.ts";
import { listEnvelope, parseListQuery } from "../../http/list.ts";
import { checkUniqueName, freeCopyName } from "../../http/resource.ts";
import { enqueueJob, PRIORITY } from "../../jobs/queue.ts";
import { recordActivity } from "../activity/record.ts";
import { answerJob } from "../jobs/handlers.ts";
import { assignmentsResource } from "./assignments.ts";
import { exportResults } from "./export.ts";
import type { ComplianceJobParams } from "./jobs.ts";
import { policiesResource, type Policy } from "./policies.ts";
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

/**
 * Queues a compliance run (one job, about no single device), records who asked, and waits for it if asked to.
 * A scoped caller's run carries their scope: it evaluates only devices in it, as their tasks reach only those.
 */
async function queueRun(
  c: Context<AppEnv>,
  target: { assignment_id: number } | { policy_id: number },
  subject: { type: string; id: number },
  wait: number,
) {
  const { db, clock } = c.var.services;
  const { scope } = c.var.auth;
  const params: ComplianceJobParams = scope.all
    ? target
    : { ...target, scope: { tag_ids: scope.tagIds, category_ids: scope.categoryIds } };
  const now = clock.now();
  const job = await db.transaction(async (tx) => {
    const queued = await enqueueJob(
      tx,
      { type: "compliance", trigger: "api", priority: PRIORITY.api, requestedBy: c.var.auth.userId, params },
      now,
    );
    await recordActivity(
      tx,
      c.var.auth,
      {
        action: `${subject.type}.run`,
        subjectType: subject.type.replace(/_/g, " "),
        subjectId: subject.id,
        after: { job_id: queued.id },
      },
      now,
    );
    return queued;
  });
  return answerJob(c, job, wait);
}

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
    const { db, clock } = c.var.services;
    const data = await db.transaction(async (tx) => {
      const [source] = await tx.select().from(policies).where(eq(policies.id, id));
      if (!source) throw ApiError.notFound(`Policy ${id}`);
      const now = clock.now();
      const bag = new FieldErrorBag();
      await checkUniqueName(
        { tx, bag, auth: c.var.auth, services: c.var.services, now, mode: "create" },
        policies.nameKey,
        policies.id,
        body.name,
        null,
        "name",
      );
      bag.throwIfAny();
      const name = body.name ?? (await freeCopyName(tx, policies.nameKey, source.name));
      const [row] = await tx
        .insert(policies)
        .values({
          name,
          nameKey: nameKey(name),
          description: source.description,
          vendor: source.vendor,
          definition: source.definition,
          definitionHash: source.definitionHash,
          builtinKey: null,
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: policies.id });
      const after = await policiesResource.show(tx, row!.id, c.var.auth.scope);
      await recordActivity(
        tx,
        c.var.auth,
        { action: "policy.copy", subjectType: "policy", subjectId: row!.id, before: null, after },
        now,
      );
      return after;
    });
    c.header("Location", new URL(`${c.req.path.replace(/\/\d+\/copy$/, "")}/${data.id}`, c.req.url).toString());
    return c.json({ data: data as z.infer<typeof Policy> }, 201);
  });
  app.openapi(runPolicyRoute, async (c) => {
    const id = c.req.valid("param").id;
    const [policy] = await c.var.services.db.select({ id: policies.id }).from(policies).where(eq(policies.id, id));
    if (!policy) throw ApiError.notFound(`Policy ${id}`);
    return queueRun(c, { policy_id: id }, { type: "policy", id }, c.req.valid("query").wait ?? 0);
  });

  assignmentsResource.register(app);
  app.openapi(runAssignmentRoute, async (c) => {
    const id = c.req.valid("param").id;
    await assignmentsResource.show(c.var.services.db, id, c.var.auth.scope); // 404 for one the caller may not see
    return queueRun(c, { assignment_id: id }, { type: "policy_assignment", id }, c.req.valid("query").wait ?? 0);
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
