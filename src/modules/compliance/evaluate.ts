import { and, desc, eq, inArray, lt, ne, sql, type SQL } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import {
  complianceResults,
  configs,
  policies,
  policyAssignments,
  type ComplianceStatus,
} from "../../db/schema/index.ts";
import { readBlobs } from "../configs/index.ts";
import { deviceRefs, recordEvents, type NewEvent } from "../../platform/outbox/record.ts";
import { isLatestVersion } from "../configs/index.ts";
import { coveredDevices, type DeviceFacts } from "./coverage.ts";
import { recordRevisions, storedRules } from "./stored-rules.ts";
import { evaluatePolicy, parsePolicy, type ParsedPolicy, type PolicyEvaluation } from "./engine/index.ts";

export type PolicyRow = typeof policies.$inferSelect;
export type AssignmentRow = typeof policyAssignments.$inferSelect;
type Version = { id: number; version: number; blobHash: string };

/** One evaluation to make: an assignment's policy on one device's version of a command (none stored: not_evaluated). */
export type Check = {
  assignment: AssignmentRow;
  policy: PolicyRow;
  device: DeviceFacts;
  command: string;
  config: Version | null;
};

/** How many evaluations ended how; `added` counts the new result rows (an unchanged version adds none). */
export type CheckSummary = { evaluated: number; added: number } & Record<ComplianceStatus, number>;

export const emptySummary = (): CheckSummary => ({
  evaluated: 0,
  added: 0,
  compliant: 0,
  not_compliant: 0,
  not_evaluated: 0,
});

export function addSummary(into: CheckSummary, more: CheckSummary): CheckSummary {
  for (const k of Object.keys(into) as (keyof CheckSummary)[]) into[k] += more[k];
  return into;
}

export const describeSummary = (s: CheckSummary) =>
  `evaluated ${s.evaluated}: ${s.compliant} compliant, ${s.not_compliant} not compliant, ${s.not_evaluated} not evaluated (no configuration stored)`;

/**
 * Parsed policies by definition hash, kept across checks: the check after each backup would otherwise parse the
 * policy and compile its patterns again (about 4 ms of CPU, against 0.2 ms to evaluate the version). A hash names
 * one definition for good, so a kept policy is never stale; the least recently used goes past PARSED_KEPT.
 */
export const PARSED_KEPT = 16;
const parsedPolicies = new Map<string, ParsedPolicy>();

export function parsedPolicyOf(p: Pick<PolicyRow, "definition" | "definitionHash">): ParsedPolicy {
  let policy = parsedPolicies.get(p.definitionHash);
  if (policy) parsedPolicies.delete(p.definitionHash);
  else policy = parsePolicy(p.definition).policy;
  parsedPolicies.set(p.definitionHash, policy);
  if (parsedPolicies.size > PARSED_KEPT) parsedPolicies.delete(parsedPolicies.keys().next().value!);
  return policy;
}

/** Texts held at once: a check reads a page of configurations, never a fleet's. */
const TEXT_BATCH = 50;

/**
 * Evaluates the checks and stores a result for each, unless an identical one exists (same assignment, device,
 * version and policy revision). Stored definitions always parse (every write checks them); a rule the engine
 * cannot parse would only mean fewer rules. Results are written per batch, in one transaction each.
 */
export async function runChecks(db: Db, checks: readonly Check[], now: Date): Promise<CheckSummary> {
  const summary = emptySummary();
  for (let i = 0; i < checks.length; i += TEXT_BATCH) {
    const batch = checks.slice(i, i + TEXT_BATCH);
    const texts = await readBlobs(db, [...new Set(batch.flatMap((c) => (c.config ? [c.config.blobHash] : [])))]);
    const rows = batch.map((c) => {
      const text = c.config ? texts.get(c.config.blobHash) : undefined;
      const evaluation: PolicyEvaluation | null =
        text === undefined ? null : evaluatePolicy(parsedPolicyOf(c.policy), text, { family: c.device.family });
      const status: ComplianceStatus = !evaluation
        ? "not_evaluated"
        : evaluation.compliant
          ? "compliant"
          : "not_compliant";
      summary.evaluated++;
      summary[status]++;
      return {
        assignmentId: c.assignment.id,
        policyId: c.policy.id,
        deviceId: c.device.id,
        command: c.command,
        configId: evaluation ? c.config!.id : null,
        configVersion: evaluation ? c.config!.version : null,
        policyHash: c.policy.definitionHash,
        status,
        score: evaluation ? Math.round(evaluation.score) : 0,
        passedRules: evaluation ? evaluation.rules.filter((r) => r.passed).length : 0,
        totalRules: evaluation?.rules.length ?? 0,
        rules: evaluation ? storedRules(evaluation.rules) : [],
        evaluatedAt: now,
      };
    });
    const added = await db.transaction(async (tx) => {
      await recordRevisions(
        tx,
        batch.flatMap((c, j) =>
          rows[j]!.totalRules ? [{ hash: c.policy.definitionHash, policy: parsedPolicyOf(c.policy) }] : [],
        ),
      );
      const fresh: { row: (typeof rows)[number]; id: number; policyName: string }[] = [];
      for (const [j, row] of rows.entries()) {
        const [inserted] = await tx
          .insert(complianceResults)
          .values(row)
          .onConflictDoNothing()
          .returning({ id: complianceResults.id });
        if (inserted) fresh.push({ row, id: inserted.id, policyName: batch[j]!.policy.name });
      }
      await recordComplianceChanges(tx, fresh, now);
      return fresh.length;
    });
    summary.added += added;
  }
  return summary;
}

/**
 * compliance.failed when a new result fails a policy the device passed (or had no result for) before, and
 * compliance.recovered when it passes one it failed: a change of state, not every failing evaluation.
 */
async function recordComplianceChanges(
  tx: DbOrTx,
  fresh: {
    row: {
      assignmentId: number;
      deviceId: number;
      command: string;
      status: ComplianceStatus;
      policyId: number;
      passedRules: number;
      totalRules: number;
    };
    id: number;
    policyName: string;
  }[],
  now: Date,
) {
  const changes: { f: (typeof fresh)[number]; failed: boolean }[] = [];
  for (const f of fresh) {
    if (f.row.status === "not_evaluated") continue;
    const [before] = await tx
      .select({ status: complianceResults.status })
      .from(complianceResults)
      .where(
        and(
          eq(complianceResults.deviceId, f.row.deviceId),
          eq(complianceResults.assignmentId, f.row.assignmentId),
          eq(complianceResults.command, f.row.command),
          lt(complianceResults.id, f.id),
          ne(complianceResults.status, "not_evaluated"),
        ),
      )
      .orderBy(desc(complianceResults.id))
      .limit(1);
    if (f.row.status === "not_compliant" && before?.status !== "not_compliant") changes.push({ f, failed: true });
    if (f.row.status === "compliant" && before?.status === "not_compliant") changes.push({ f, failed: false });
  }
  if (!changes.length) return;
  const refs = await deviceRefs(
    tx,
    changes.map((c) => c.f.row.deviceId),
  );
  await recordEvents(
    tx,
    changes.map(({ f, failed }): NewEvent => {
      const base = { device: refs.get(f.row.deviceId)!, policy_id: f.row.policyId, policy_name: f.policyName };
      return failed
        ? { type: "compliance.failed", payload: { ...base, failed_rules: f.row.totalRules - f.row.passedRules } }
        : { type: "compliance.recovered", payload: base };
    }),
    now,
  );
}

/** The latest version of each (device, command) asked for; a pair with nothing stored is absent. */
export async function latestVersions(
  db: Db,
  pairs: readonly { deviceId: number; command: string }[],
): Promise<Map<string, Version>> {
  const found = new Map<string, Version>();
  const ids = [...new Set(pairs.map((p) => p.deviceId))];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .select({
        id: configs.id,
        deviceId: configs.deviceId,
        command: configs.command,
        version: configs.version,
        blobHash: configs.blobHash,
      })
      .from(configs)
      .where(and(inArray(configs.deviceId, ids.slice(i, i + 500)), sql`(${isLatestVersion})`));
    for (const r of rows) found.set(pairKey(r.deviceId, r.command), r);
  }
  return found;
}

export const pairKey = (deviceId: number, command: string) => `${deviceId}\n${command}`;

/**
 * The checks of one assignment: every device it covers (or those of the devices `within` selects it covers), each
 * against the latest version of the assignment's command (or of the device's configuration command).
 */
export async function assignmentChecks(
  db: Db,
  assignment: AssignmentRow,
  policy: PolicyRow,
  within?: SQL,
): Promise<Check[]> {
  const covered = await coveredDevices(db, assignment, within);
  const wanted = covered.map((d) => ({ device: d, command: assignment.command ?? d.configCommand }));
  const latest = await latestVersions(
    db,
    wanted.map((w) => ({ deviceId: w.device.id, command: w.command })),
  );
  return wanted.map((w) => ({
    assignment,
    policy,
    device: w.device,
    command: w.command,
    config: latest.get(pairKey(w.device.id, w.command)) ?? null,
  }));
}

/** Assignments (with their policies) chosen by a condition on policy_assignments, e.g. one policy's enabled ones. */
export async function assignmentsWithPolicies(db: Db, where: SQL | undefined) {
  return db
    .select({ assignment: policyAssignments, policy: policies })
    .from(policyAssignments)
    .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
    .where(where)
    .orderBy(policyAssignments.id);
}

/** Evaluates assignments on every device they cover (or those of the devices `within` selects they cover). */
export async function checkAssignments(
  db: Db,
  pairs: readonly { assignment: AssignmentRow; policy: PolicyRow }[],
  now: Date,
  within?: SQL,
): Promise<CheckSummary> {
  const summary = emptySummary();
  for (const { assignment, policy } of pairs)
    addSummary(summary, await runChecks(db, await assignmentChecks(db, assignment, policy, within), now));
  return summary;
}
