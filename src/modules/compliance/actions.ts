import { eq } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import { policies } from "../../db/schema/index.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { checkUniqueName, freeCopyName, type Caller } from "../../platform/http/resource.ts";
import { enqueueJob, PRIORITY, type Job } from "../../platform/jobs/queue.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import type { ComplianceJobParams } from "./jobs.ts";
import { assignmentsResource, policiesResource } from "./resource.ts";

/**
 * Queues a compliance run (one job, about no single device) and records who asked. A scoped caller's run
 * carries their scope: it evaluates only devices in it, as their tasks reach only those. The API and the
 * compliance page both start runs here.
 */
async function queueRun(
  caller: Caller,
  target: { assignment_id: number } | { policy_id: number },
  subject: { type: string; id: number },
): Promise<Job> {
  const { db, clock } = caller.services;
  const { scope } = caller.auth;
  const params: ComplianceJobParams = scope.all
    ? target
    : { ...target, scope: { tag_ids: scope.tagIds, category_ids: scope.categoryIds } };
  const now = clock.now();
  return await db.transaction(async (tx) => {
    const queued = await enqueueJob(
      tx,
      { type: "compliance", trigger: "api", priority: PRIORITY.api, requestedBy: caller.auth.userId, params },
      now,
    );
    await recordActivity(
      tx,
      caller.auth,
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
}

/** Evaluates a policy's enabled assignments now (404 for an unknown policy). */
export async function runPolicy(caller: Caller, id: number): Promise<Job> {
  const [policy] = await caller.services.db.select({ id: policies.id }).from(policies).where(eq(policies.id, id));
  if (!policy) throw ApiError.notFound(`Policy ${id}`);
  return queueRun(caller, { policy_id: id }, { type: "policy", id });
}

/** Evaluates one assignment now (404 for one the caller may not see). */
export async function runAssignment(caller: Caller, id: number): Promise<Job> {
  await assignmentsResource.show(caller.services.db, id, caller.auth.scope);
  return queueRun(caller, { assignment_id: id }, { type: "policy_assignment", id });
}

/** A user policy with the source's definition, description and vendor; `name` left out: "<name> (copy)". */
export async function copyPolicy(caller: Caller, id: number, name: string | undefined) {
  const { db, clock } = caller.services;
  return await db.transaction(async (tx) => {
    const [source] = await tx.select().from(policies).where(eq(policies.id, id));
    if (!source) throw ApiError.notFound(`Policy ${id}`);
    const now = clock.now();
    const bag = new FieldErrorBag();
    await checkUniqueName(
      { tx, bag, auth: caller.auth, services: caller.services, now, mode: "create" },
      policies.nameKey,
      policies.id,
      name,
      null,
      "name",
    );
    bag.throwIfAny();
    const copyName = name ?? (await freeCopyName(tx, policies.nameKey, source.name));
    const [row] = await tx
      .insert(policies)
      .values({
        name: copyName,
        nameKey: nameKey(copyName),
        description: source.description,
        vendor: source.vendor,
        definition: source.definition,
        definitionHash: source.definitionHash,
        builtinKey: null,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: policies.id });
    const after = await policiesResource.show(tx, row!.id, caller.auth.scope);
    await recordActivity(
      tx,
      caller.auth,
      { action: "policy.copy", subjectType: "policy", subjectId: row!.id, before: null, after },
      now,
    );
    return after;
  });
}
