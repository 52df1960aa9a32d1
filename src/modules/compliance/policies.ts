import { z } from "@hono/zod-openapi";
import { and, count, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { policies, policyAssignments } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { idFilter } from "../../platform/http/filters.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { plural } from "../../kernel/words.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import { parsePolicy } from "./engine/index.ts";
import { rulesCount } from "./rules-count.ts";
import { assignmentsReach, visibleAssignments } from "./assignments.ts";
import type { DeviceScope } from "../../platform/auth/scope.ts";

export const Policy = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    vendor: z.string().openapi({
      description: "The platform the rules are written for (a hint; evaluation reads the device's own family)",
    }),
    definition: z.string().openapi({ description: "The rules, in rConfig's policy format (docs/compliance.md)" }),
    revision: z
      .string()
      .openapi({ description: "SHA-256 of the definition; each result names the revision it was evaluated against" }),
    rules_count: z.number().int(),
    builtin: z
      .boolean()
      .openapi({ description: "Shipped with netkeep and updated by upgrades: read-only, copy it to customise" }),
    assignments_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Policy");

const EXAMPLE_DEFINITION = [
  "// Description: Telnet must be disabled on the VTY lines",
  "#[must_not_match_regex]",
  "^ transport input .*telnet",
  "",
  "// Description: NTP keeps logs and certificates on time",
  "#[must_match_single_string]",
  "ntp server",
  "",
].join("\n");

export const PolicyInput = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      .openapi({ example: "IOS baseline" }),
    description: z
      .string()
      .max(2000, "must be at most 2000 characters")
      .optional()
      .openapi({ example: "What our auditors check on every IOS router" }),
    vendor: z.string().max(100, "must be at most 100 characters").optional().openapi({ example: "Cisco IOS" }),
    definition: z.string().min(1, "must not be empty").max(500_000, "must be at most 500000 characters").openapi({
      description: "rConfig's policy text; checked on every write (a problem is a 422 naming its line)",
      example: EXAMPLE_DEFINITION,
    }),
  })
  .openapi("PolicyInput");

type PolicyRow = typeof policies.$inferSelect;

/** Assignments of each policy that a caller with this scope sees (all of them for the delete's check). */
async function assignmentCounts(
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

/** Problems in a definition go under `definition`, each naming its line: "definition: line 7: ...". */
export function checkDefinition(ctx: Pick<WriteCtx, "bag">, definition: string): void {
  for (const p of parsePolicy(definition).problems)
    ctx.bag.add("definition", `definition: line ${p.line}: ${p.message}`);
}

export const definitionHash = (definition: string) => sha256Hex(definition);

export const policiesResource = defineResource({
  tag: "Policy compliance",
  path: "/policies",
  singular: "policy",
  plural: "policies",
  resource: "policycompliance",
  table: policies,
  output: Policy,
  input: PolicyInput,
  listSpec: {
    fields: Object.keys(Policy.shape),
    filters: {
      id: idFilter(policies.id, "id", "Policy id"),
      name: nameFilter(policies.nameKey),
      vendor: {
        describe: "Vendor hint (any case)",
        build: (v) =>
          inArray(
            sql`lower(${policies.vendor})`,
            v.map((s) => s.toLowerCase()),
          ),
      },
      builtin: {
        describe: "true: shipped with netkeep; false: made by users",
        build: (v) => {
          if (v.some((s) => s !== "true" && s !== "false"))
            throw new ApiError(422, "filter[builtin] must be true or false");
          if (v.includes("true") && v.includes("false")) return sql`1 = 1`;
          return v[0] === "true" ? isNotNull(policies.builtinKey) : isNull(policies.builtinKey);
        },
      },
    },
    sorts: {
      id: policies.id,
      name: sql`lower(${policies.name})`,
      created_at: policies.createdAt,
      updated_at: policies.updatedAt,
    },
    defaultSort: "name",
    idColumn: policies.id,
    search: {
      describe: "Substring of the name, description or definition",
      build: (term) =>
        sql`(${containsText(policies.name, term)} or ${containsText(policies.description, term)} or ${containsText(policies.definition, term)})`,
    },
  },
  // A policy's rules judge every device its assignments cover: changing them changes those devices' results.
  reaches: async (db, ids) => {
    const using = await db
      .select({ id: policyAssignments.id })
      .from(policyAssignments)
      .where(inArray(policyAssignments.policyId, ids));
    return assignmentsReach(using.map((a) => a.id));
  },
  async serialize(db, rows, scope) {
    const counts = await assignmentCounts(
      db,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as PolicyRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      vendor: r.vendor,
      definition: r.definition,
      revision: r.definitionHash,
      rules_count: rulesCount(r.definitionHash, r.definition),
      builtin: r.builtinKey !== null,
      assignments_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(ctx, policies.nameKey, policies.id, input.name, existing?.id ?? null, "name");
    const values: Partial<typeof policies.$inferInsert> = ctx.mode === "patch" ? {} : { description: "", vendor: "" };
    if (input.name !== undefined) Object.assign(values, { name: input.name, nameKey });
    if (input.description !== undefined) values.description = input.description;
    if (input.vendor !== undefined) values.vendor = input.vendor;
    if (input.definition !== undefined) {
      checkDefinition(ctx, input.definition);
      values.definition = input.definition;
      values.definitionHash = await definitionHash(input.definition);
    }
    return values;
  },
  readOnlyReason: (row) =>
    row.builtinKey
      ? `Built-in policy '${row.name}' is read-only; copy it with POST /api/v1/policies/${row.id}/copy and change the copy`
      : undefined,
  async beforeDelete(rows, ctx) {
    const used = [
      ...(
        await assignmentCounts(
          ctx.tx,
          rows.map((r) => r.id),
        )
      ).entries(),
    ].filter(([, n]) => n > 0);
    if (used.length) {
      const [id, n] = used[0]!;
      throw ApiError.conflict(
        `Policy ${id} has ${plural(n, "assignment")}; delete them first (their results go with them)`,
      );
    }
  },
  descriptions: {
    create:
      'The definition is checked: a line that is not part of a rule block, an unknown method, a pattern RE2 cannot compile, over 1000 characters or with control characters is a 422 whose message names the line ("definition: line 7: ...").',
    update:
      "Built-in policies are read-only (403): copy one with POST /policies/{id}/copy. The definition is checked as on create; changing it makes a new revision, which the next evaluation of each device records anew.",
    delete: "Refused with 409 while the policy has assignments, and with 403 for a built-in one.",
  },
});
