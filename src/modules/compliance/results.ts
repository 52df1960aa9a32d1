import type { z } from "@hono/zod-openapi";
import { and, asc, count, eq, gt, inArray, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import {
  COMPLIANCE_STATUSES,
  complianceResults,
  deviceTags,
  devices,
  policies,
  policyAssignments,
  type ComplianceStatus,
  type RevisionRule,
} from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { idFilter, wholeNumbers } from "../../platform/http/filters.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { timeBoundFilter } from "../configs/index.ts";
import { assignmentCoversDevice } from "./coverage.ts";
import { isCurrentResult } from "./current.ts";
import type { RuleResult } from "./engine/index.ts";
import { ComplianceResult } from "./schemas.ts";
import { revisionsOf, ruleResults, type StoredRule } from "./stored-rules.ts";

/** A result as the API shows it (schemas.ts: ComplianceResult). */
export type ResultOut = z.infer<typeof ComplianceResult>;

const statusFilter = {
  describe: `Result status: ${COMPLIANCE_STATUSES.join(", ")}`,
  example: "not_compliant",
  build: (v: string[]) => {
    const bad = v.find((s) => !(COMPLIANCE_STATUSES as readonly string[]).includes(s));
    if (bad)
      throw new ApiError(422, `filter[status] must be one of: ${COMPLIANCE_STATUSES.join(", ")}; '${bad}' is not`);
    return inArray(complianceResults.status, v as ComplianceStatus[]);
  },
};

export const resultListSpec: ListSpec = {
  fields: Object.keys(ComplianceResult.shape),
  filters: {
    id: idFilter(complianceResults.id, "id", "Result id"),
    policy_id: idFilter(complianceResults.policyId, "policy_id", "Policy id"),
    assignment_id: idFilter(complianceResults.assignmentId, "assignment_id", "Policy assignment id"),
    device_id: idFilter(complianceResults.deviceId, "device_id", "Device id"),
    tag_id: {
      describe: "Tag id: results of devices carrying any of them",
      build: (v) =>
        inArray(
          complianceResults.deviceId,
          sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, wholeNumbers("filter[tag_id]", v))})`,
        ),
    },
    category_id: idFilter(devices.categoryId, "category_id", "The device's category id"),
    status: statusFilter,
    latest: {
      describe: "true: only each device's current result per assignment; false: only older ones",
      build: (v) => {
        if (v.length !== 1 || (v[0] !== "true" && v[0] !== "false"))
          throw new ApiError(422, "filter[latest] must be true or false");
        return v[0] === "true" ? sql`(${isCurrentResult})` : sql`not (${isCurrentResult})`;
      },
    },
    date_from: timeBoundFilter(
      complianceResults.evaluatedAt,
      "date_from",
      "from",
      "Results evaluated at or after this date or time",
    ),
    date_to: timeBoundFilter(
      complianceResults.evaluatedAt,
      "date_to",
      "to",
      "Results evaluated at or before this time (a date includes its whole day, UTC)",
    ),
  },
  sorts: {
    id: complianceResults.id,
    evaluated_at: complianceResults.evaluatedAt,
    score: complianceResults.score,
    status: complianceResults.status,
    device_name: sql`lower(${devices.name})`,
    policy_name: sql`lower(${policies.name})`,
  },
  defaultSort: "-id",
  idColumn: complianceResults.id,
  search: {
    describe: "Substring of the device or policy name",
    build: (term) => sql`(${containsText(devices.name, term)} or ${containsText(policies.name, term)})`,
  },
};

const selectResults = (db: DbOrTx) =>
  db
    .select({ result: complianceResults, deviceName: devices.name, policyName: policies.name })
    .from(complianceResults)
    .innerJoin(devices, eq(devices.id, complianceResults.deviceId))
    .innerJoin(policies, eq(policies.id, complianceResults.policyId));

type Selected = Awaited<ReturnType<ReturnType<typeof selectResults>["where"]>>[number];

/** A RuleResult (the engine's, as evaluated) in the API's snake_case. */
function ruleOut(rule: RuleResult): ResultOut["rules"][number] {
  const { sectionsChecked, ...rest } = rule;
  return sectionsChecked === undefined ? rest : { ...rest, sections_checked: sectionsChecked };
}

function serialize({ result: r, deviceName, policyName }: Selected, revisions: Map<string, RevisionRule[]>): ResultOut {
  return {
    id: r.id,
    assignment_id: r.assignmentId,
    policy_id: r.policyId,
    policy_name: policyName,
    device_id: r.deviceId,
    device_name: deviceName,
    command: r.command,
    config_id: r.configId,
    config_version: r.configVersion,
    policy_revision: r.policyHash,
    status: r.status,
    score: r.score,
    passed_rules: r.passedRules,
    total_rules: r.totalRules,
    rules: ruleResults(r.rules as StoredRule[], revisions.get(r.policyHash)).map(ruleOut),
    evaluated_at: r.evaluatedAt.toISOString(),
  };
}

/** The rows as the API shows them, their revisions' rules read once for all of them. */
async function serializeAll(db: DbOrTx, rows: readonly Selected[]): Promise<ResultOut[]> {
  const revisions = await revisionsOf(
    db,
    rows.filter((r) => (r.result.rules as unknown[]).length).map((r) => r.result.policyHash),
  );
  return rows.map((r) => serialize(r, revisions));
}

/** A page of the list: the selected results in the list's order. */
export const resultPageQuery = (db: DbOrTx, where: SQL | undefined, q: ListQuery) =>
  selectResults(db)
    .where(where)
    .orderBy(...q.orderBy)
    .limit(q.perPage)
    .offset((q.page - 1) * q.perPage);

/**
 * How many results the list selects. Unfiltered and unscoped every result counts, as its device and policy exist
 * (foreign keys, ON DELETE CASCADE): the count then reads the smallest index of compliance_results instead of
 * joining every result to both (bench:estate: 307 ms for the first page at 20,000 devices x 8 nights).
 */
export const resultCountQuery = (db: DbOrTx, where: SQL | undefined) =>
  where
    ? db
        .select({ n: count() })
        .from(complianceResults)
        .innerJoin(devices, eq(devices.id, complianceResults.deviceId))
        .innerJoin(policies, eq(policies.id, complianceResults.policyId))
        .where(where)
    : db.select({ n: count() }).from(complianceResults);

export async function listResults(
  db: DbOrTx,
  scope: DeviceScope,
  q: ListQuery,
): Promise<{ total: number; rows: ResultOut[] }> {
  const where = and(deviceScopeCondition(scope), q.where);
  const [rows, [total]] = await Promise.all([resultPageQuery(db, where, q), resultCountQuery(db, where)]);
  return { total: total?.n ?? 0, rows: await serializeAll(db, rows) };
}

/** A page of an export: from the id after the last one sent, through the primary key, whatever the history's size. */
export const resultsAfterQuery = (db: DbOrTx, where: SQL | undefined, afterId: number, limit: number) =>
  selectResults(db)
    .where(and(where, gt(complianceResults.id, afterId)))
    .orderBy(asc(complianceResults.id))
    .limit(limit);

/** The results the query selects, page by page in id order after `afterId` (an export's cursor). */
export async function resultsAfter(
  db: DbOrTx,
  scope: DeviceScope,
  where: SQL | undefined,
  afterId: number,
  limit: number,
): Promise<ResultOut[]> {
  return serializeAll(db, await resultsAfterQuery(db, and(deviceScopeCondition(scope), where), afterId, limit));
}

export async function getResult(db: DbOrTx, scope: DeviceScope, id: number): Promise<ResultOut> {
  const [row] = await selectResults(db).where(and(eq(complianceResults.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Compliance result ${id}`);
  return (await serializeAll(db, [row]))[0]!;
}

/**
 * A device's current state: each assignment that covers it now or has evaluated it, with its newest result
 * (null when it covers the device but has not evaluated it yet). 404 when the device is outside the scope.
 */
export async function deviceCompliance(db: DbOrTx, scope: DeviceScope, deviceId: number) {
  const [device] = await db
    .select({ id: devices.id, name: devices.name })
    .from(devices)
    .where(and(eq(devices.id, deviceId), deviceScopeCondition(scope)));
  if (!device) throw ApiError.notFound(`Device ${deviceId}`);
  const [covering, current] = await Promise.all([
    db
      .select({
        id: policyAssignments.id,
        policyId: policies.id,
        policyName: policies.name,
        enabled: policyAssignments.enabled,
      })
      .from(policyAssignments)
      .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
      .innerJoin(devices, assignmentCoversDevice)
      .where(eq(devices.id, deviceId)),
    selectResults(db).where(and(eq(complianceResults.deviceId, deviceId), sql`(${isCurrentResult})`)),
  ]);
  const resultOf = new Map((await serializeAll(db, current)).map((r) => [r.assignment_id, r]));
  const assignmentIds = [...new Set([...covering.map((c) => c.id), ...resultOf.keys()])].sort((a, b) => a - b);
  const info = new Map(covering.map((c) => [c.id, c]));
  const assignments = assignmentIds.map((id) => {
    const result = resultOf.get(id) ?? null;
    return {
      assignment_id: id,
      policy_id: info.get(id)?.policyId ?? result!.policy_id,
      policy_name: info.get(id)?.policyName ?? result!.policy_name,
      covers_device: info.has(id),
      status: result?.status ?? null,
      score: result?.score ?? null,
      result,
    };
  });
  const statuses = assignments.flatMap((a) => (a.status ? [a.status] : []));
  const status: ComplianceStatus | null = !statuses.length
    ? null
    : statuses.includes("not_compliant")
      ? "not_compliant"
      : statuses.every((s) => s === "compliant")
        ? "compliant"
        : "not_evaluated";
  return { device_id: device.id, device_name: device.name, status, assignments };
}
