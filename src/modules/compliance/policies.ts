import { and, count, inArray, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { policyAssignments } from "../../db/schema/index.ts";
import { reachesOnlyScope, type DeviceScope } from "../../platform/auth/scope.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import { parsePolicy } from "./engine/index.ts";
import { assignmentsReach, visibleAssignments } from "./assignments.ts";

/** Assignments of each policy that a caller with this scope sees (all of them for the delete's check). */
export async function assignmentCounts(
  db: DbOrTx,
  ids: number[],
  scope: DeviceScope = { all: true },
): Promise<Map<number, number>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select({ id: policyAssignments.policyId, n: count() })
    .from(policyAssignments)
    .where(and(inArray(policyAssignments.policyId, ids), visibleAssignments(scope)))
    .groupBy(policyAssignments.policyId);
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** A definition's problems, each naming its line: "definition: line 7: ...". */
export const definitionProblems = (definition: string): string[] =>
  parsePolicy(definition).problems.map((p) => `definition: line ${p.line}: ${p.message}`);

/** A policy's revision: each result names the one it was evaluated against. */
export const definitionHash = (definition: string) => sha256Hex(definition);

/** The devices these policies reach: those their assignments cover, whose results their rules decide. */
export async function policiesReach(db: DbOrTx, ids: number[]): Promise<SQL> {
  const using = await db
    .select({ id: policyAssignments.id })
    .from(policyAssignments)
    .where(inArray(policyAssignments.policyId, ids));
  return assignmentsReach(using.map((a) => a.id));
}

/**
 * Which of these policies the caller may change or delete: those whose assignments judge no device outside the
 * caller's scope (every one, for a role that sees every device), as the policies resource decides on a write.
 * Pages show a policy's Edit and Delete only then (a built-in policy is read-only besides).
 */
export async function changeablePolicies(db: DbOrTx, scope: DeviceScope, ids: number[]): Promise<Set<number>> {
  if (scope.all) return new Set(ids);
  const out = new Set<number>();
  for (const id of ids) if (await reachesOnlyScope(db, scope, await policiesReach(db, [id]))) out.add(id);
  return out;
}
