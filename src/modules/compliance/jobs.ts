import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { policyAssignments } from "../../db/schema/index.ts";
import type { Job } from "../../jobs/queue.ts";
import { coversDevice } from "./coverage.ts";
import { assignmentsWithPolicies, checkAssignments, describeSummary, type CheckSummary } from "./evaluate.ts";

/** What a compliance job evaluates: one assignment, one policy's enabled assignments, or (a task's job) one device. */
export type ComplianceJobParams = { assignment_id: number } | { policy_id: number };

/**
 * Runs a compliance job's evaluations. A job about a device (a compliance task's) evaluates every enabled
 * assignment covering it; a run of an assignment evaluates it (enabled or not: it was asked for) on every device
 * it covers; a run of a policy, each of its enabled assignments.
 */
export async function runComplianceJob(db: Db, job: Job, now: Date): Promise<{ summary: CheckSummary; message: string }> {
  const params = (job.params ?? {}) as Partial<{ assignment_id: number; policy_id: number }>;
  if (job.deviceId !== null) {
    const covering = await assignmentsWithPolicies(db, and(eq(policyAssignments.enabled, true), coversDevice(job.deviceId)));
    const summary = await checkAssignments(db, covering, now, [job.deviceId]);
    return { summary, message: covering.length ? describeSummary(summary) : "no enabled policy assignment covers the device" };
  }
  if (params.assignment_id !== undefined) {
    const found = await assignmentsWithPolicies(db, eq(policyAssignments.id, params.assignment_id));
    if (!found.length) throw new Error(`policy assignment ${params.assignment_id} no longer exists`);
    const summary = await checkAssignments(db, found, now);
    return { summary, message: describeSummary(summary) };
  }
  if (params.policy_id !== undefined) {
    const found = await assignmentsWithPolicies(db, and(eq(policyAssignments.policyId, params.policy_id), eq(policyAssignments.enabled, true)));
    const summary = await checkAssignments(db, found, now);
    return { summary, message: found.length ? describeSummary(summary) : `policy ${params.policy_id} has no enabled assignment` };
  }
  throw new Error("the compliance job names no device, assignment or policy");
}
