import { inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { policies } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { idFilter } from "../../platform/http/filters.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import { plural } from "../../kernel/words.ts";
import { parsePolicy } from "./engine/index.ts";
import { assignmentCounts, definitionHash, definitionProblems, policiesReach } from "./policies.ts";
import { Policy, PolicyInput } from "./schemas.ts";

// The module's two CRUD groups, declared (src/platform/http/resource.ts writes their routes): policies and their
// assignments. What they read beyond their own row lives in the service files they name.

type PolicyRow = typeof policies.$inferSelect;

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
  reaches: policiesReach,
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
      rules_count: parsePolicy(r.definition).policy.rules.length,
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
      for (const problem of definitionProblems(input.definition)) ctx.bag.add("definition", problem);
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
