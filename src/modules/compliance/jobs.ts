import { and, eq, type SQL } from "drizzle-orm";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import type { Db } from "../../db/client.ts";
import { devices, policyAssignments } from "../../db/schema/index.ts";
import type { Job } from "../../platform/jobs/queue.ts";
import { coversDevice } from "./coverage.ts";
import { assignmentsWithPolicies, checkAssignments, describeSummary, type CheckSummary } from "./evaluate.ts";

/**
 * What a compliance job evaluates: one assignment, or one policy's enabled assignments (a task's job names its
 * device instead). `scope`: the device scope of the scoped user who asked; the run reaches only devices in it.
 */
export type ComplianceJobParams = ({ assignment_id: number } | { policy_id: number }) & { scope?: RunScope };
type RunScope = { tag_ids: number[]; category_ids: number[] };

/** The condition on `devices` a run is limited to: the requester's scope, or none (undefined) for an unscoped one. */
const withinScope = (scope: RunScope | undefined): SQL | undefined =>
  scope ? deviceScopeCondition({ all: false, tagIds: scope.tag_ids, categoryIds: scope.category_ids }) : undefined;

/**
 * Runs a compliance job's evaluations. A job about a device (a compliance task's) evaluates every enabled
 * assignment covering it; a run of an assignment evaluates it (enabled or not: it was asked for) on every device
 * it covers; a run of a policy, each of its enabled assignments. A run a scoped user asked for evaluates only
 * the devices in their scope.
 */
export async function runComplianceJob(
  db: Db,
  job: Job,
  now: Date,
): Promise<{ summary: CheckSummary; message: string }> {
  const params = (job.params ?? {}) as Partial<{ assignment_id: number; policy_id: number; scope: RunScope }>;
  if (job.deviceId !== null) {
    const covering = await assignmentsWithPolicies(
      db,
      and(eq(policyAssignments.enabled, true), coversDevice(job.deviceId)),
    );
    const summary = await checkAssignments(db, covering, now, eq(devices.id, job.deviceId));
    return {
      summary,
      message: covering.length ? describeSummary(summary) : "no enabled policy assignment covers the device",
    };
  }
  const within = withinScope(params.scope);
  if (params.assignment_id !== undefined) {
    const found = await assignmentsWithPolicies(db, eq(policyAssignments.id, params.assignment_id));
    if (!found.length) throw new Error(`policy assignment ${params.assignment_id} no longer exists`);
    const summary = await checkAssignments(db, found, now, within);
    return { summary, message: describeSummary(summary) };
  }
  if (params.policy_id !== undefined) {
    const found = await assignmentsWithPolicies(
      db,
      and(eq(policyAssignments.policyId, params.policy_id), eq(policyAssignments.enabled, true)),
    );
    const summary = await checkAssignments(db, found, now, within);
    return {
      summary,
      message: found.length ? describeSummary(summary) : `policy ${params.policy_id} has no enabled assignment`,
    };
  }
  throw new Error("the compliance job names no device, assignment or policy");
}
