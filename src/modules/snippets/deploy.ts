import type { z } from "@hono/zod-openapi";
import { and, eq, inArray } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { snippetDeploymentDevices, snippetDeployments, snippets } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { createDeployment, type DeploymentOptions, type RenderedTarget } from "./deployments.ts";
import { visibleDeploymentDevices } from "./deployment-views.ts";
import { CONFIRM_ABOVE, type DeployInput, type SendInput } from "./routes.ts";
import { renderTargets, resolveTargets, type TargetLists } from "./targets.ts";

export type DeployBody = z.infer<typeof DeployInput>;
export type SendBody = z.infer<typeof SendInput>;

/**
 * Who deploys and when, and how to tell the collector beside the API that pushes were committed (it starts them
 * now instead of at its next poll): the API's handlers and the web pages pass the same.
 */
export type DeployActor = { db: Db; auth: AuthContext; now: Date; jobsQueued: () => void };

export async function loadSnippet(db: DbOrTx, id: number) {
  const [snippet] = await db.select().from(snippets).where(eq(snippets.id, id));
  if (!snippet) throw ApiError.notFound(`Snippet ${id}`);
  return snippet;
}

export const dryRunAnswer = (targets: RenderedTarget[]) => ({
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
export async function startDeployment(
  { db, auth, now }: DeployActor,
  snippet: typeof snippets.$inferSelect,
  kind: "send" | "deploy",
  targets: RenderedTarget[],
  options: DeploymentOptions,
) {
  return await db.transaction(async (tx) => {
    const id = await createDeployment(
      tx,
      { snippet, kind, targets, options, requestedBy: auth.userId, trigger: "api" },
      now,
    );
    await recordActivity(
      tx,
      auth,
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

/**
 * A push of one snippet to one device, as POST /snippets/{id}/send answers it: the device's lines for a dry run,
 * else the new deployment's id and its one push job. A device outside the scope (or none) is a 404, a disabled
 * one a 409.
 */
export async function sendSnippet(
  actor: DeployActor,
  snippetId: number,
  body: SendBody,
): Promise<{ dryRun: ReturnType<typeof dryRunAnswer> } | { deploymentId: number; jobId: number }> {
  const { db, auth } = actor;
  const snippet = await loadSnippet(db, snippetId);
  const [target] = await resolveTargets(db, auth.scope, {
    deviceIds: [body.device_id],
    categoryIds: [],
    tagIds: [],
  }).catch((err) => {
    if (err instanceof ApiError && err.status === 422) throw ApiError.notFound(`Device ${body.device_id}`);
    throw err;
  });
  if (!target) throw ApiError.conflict(`Device ${body.device_id} is disabled; enable it before pushing to it`);
  const rendered = renderTargets([target], snippet.content, snippet.rollbackContent, body.dynamic_vars ?? {});
  if (body.dry_run) return { dryRun: dryRunAnswer(rendered) };
  const deploymentId = await startDeployment(actor, snippet, "send", rendered, {
    canary: 0,
    stopOnFailure: false,
    concurrency: 1,
  });
  const [row] = await db
    .select({ jobId: snippetDeploymentDevices.jobId })
    .from(snippetDeploymentDevices)
    .where(eq(snippetDeploymentDevices.deploymentId, deploymentId));
  // As a deploy: the collector beside the API starts the push now, not at its next poll.
  actor.jobsQueued();
  return { deploymentId, jobId: row!.jobId! };
}

/**
 * A deploy with its guard rails, as POST /snippets/{id}/deploy answers it: every target's lines for a dry run,
 * else the new deployment's id. More than CONFIRM_ABOVE devices must be confirmed by count, and a count that
 * differs from the devices reached is refused (the fleet changed since the preview).
 */
export async function deploySnippet(
  actor: DeployActor,
  snippetId: number,
  body: DeployBody,
): Promise<{ dryRun: ReturnType<typeof dryRunAnswer> } | { deploymentId: number }> {
  const snippet = await loadSnippet(actor.db, snippetId);
  const lists: TargetLists = {
    deviceIds: body.devices ?? [],
    categoryIds: body.categories ?? [],
    tagIds: body.tags ?? [],
  };
  const targets = await resolveTargets(actor.db, actor.auth.scope, lists);
  if (!targets.length)
    throw ApiError.validation({ devices: ["the devices, categories and tags given reach no enabled device"] });
  const rendered = renderTargets(targets, snippet.content, snippet.rollbackContent, body.dynamic_vars ?? {});
  if (body.dry_run) return { dryRun: dryRunAnswer(rendered) };
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
  const deploymentId = await startDeployment(actor, snippet, "deploy", rendered, {
    canary,
    stopOnFailure: body.stop_on_failure ?? false,
    concurrency: body.concurrency ?? 10,
  });
  // The first pushes are committed: the collector beside the API starts them now, not at its next poll.
  actor.jobsQueued();
  return { deploymentId };
}

/**
 * Pushes again, as a new deployment, to the devices of a deployment whose push failed or could not run, with
 * the lines they were sent then; only devices in the caller's scope that still exist and are enabled. 422 when
 * there are none (or the snippet is gone).
 */
export async function redeployFailures(actor: DeployActor, deploymentId: number): Promise<number> {
  const { db, auth } = actor;
  const [deployment] = await db.select().from(snippetDeployments).where(eq(snippetDeployments.id, deploymentId));
  if (!deployment) throw ApiError.notFound(`Snippet deployment ${deploymentId}`);
  const failed = await db
    .select()
    .from(snippetDeploymentDevices)
    .where(
      and(
        eq(snippetDeploymentDevices.deploymentId, deploymentId),
        inArray(snippetDeploymentDevices.status, ["failed", "error"]),
        visibleDeploymentDevices(auth.scope),
      ),
    );
  const ids = failed.flatMap((f) => (f.deviceId === null ? [] : [f.deviceId]));
  if (!ids.length) throw ApiError.validation({ devices: ["no failed device of this deployment is left to push to"] });
  if (deployment.snippetId === null) throw ApiError.validation({ snippet: ["the snippet was deleted"] });
  const snippet = await loadSnippet(db, deployment.snippetId);
  const enabled = new Set(
    (await resolveTargets(db, auth.scope, { deviceIds: ids, categoryIds: [], tagIds: [] })).map((t) => t.device.id),
  );
  const targets = failed
    .filter((f) => f.deviceId !== null && enabled.has(f.deviceId))
    .map((f) => ({ deviceId: f.deviceId!, deviceName: f.deviceName, lines: f.lines, rollbackLines: f.rollbackLines }));
  if (!targets.length) throw ApiError.validation({ devices: ["the failed devices are all disabled now"] });
  const id = await startDeployment(actor, snippet, "deploy", targets, {
    canary: 0,
    stopOnFailure: deployment.stopOnFailure,
    concurrency: deployment.concurrency,
  });
  actor.jobsQueued();
  return id;
}
