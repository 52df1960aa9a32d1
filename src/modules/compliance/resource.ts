import { eq, inArray, sql } from "drizzle-orm";
import { categories, devices, policies, policyAssignments, tags } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { booleanFilter, builtinFilter, idFilter } from "../../platform/http/filters.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import { plural } from "../../kernel/words.ts";
import { rulesCount } from "./rules-count.ts";
import { assignmentCounts, definitionHash, definitionProblems, policiesReach } from "./policies.ts";
import { assignmentsReach, existingIds, inScopeDeviceIds, visibleAssignments } from "./assignments.ts";
import { Assignment, AssignmentInput, Policy, PolicyInput } from "./schemas.ts";

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
      builtin: builtinFilter(policies.builtinKey),
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

type AssignmentRow = typeof policyAssignments.$inferSelect;
const LISTS = [
  { field: "devices", column: "deviceIds", table: devices, scope: "devices", singular: "device" },
  { field: "categories", column: "categoryIds", table: categories, scope: "categories", singular: "category" },
  { field: "tags", column: "tagIds", table: tags, scope: "tags", singular: "tag" },
] as const;

export const assignmentsResource = defineResource({
  tag: "Policy compliance",
  path: "/policy-assignments",
  singular: "policy assignment",
  plural: "policy assignments",
  resource: "policycompliance",
  table: policyAssignments,
  output: Assignment,
  input: AssignmentInput,
  listSpec: {
    fields: Object.keys(Assignment.shape),
    filters: {
      id: idFilter(policyAssignments.id, "id", "Assignment id"),
      policy_id: idFilter(policyAssignments.policyId, "policy_id", "Policy id"),
      enabled: booleanFilter(policyAssignments.enabled, "enabled"),
      run_on_backup: booleanFilter(policyAssignments.runOnBackup, "run_on_backup"),
    },
    sorts: { id: policyAssignments.id, policy_id: policyAssignments.policyId, created_at: policyAssignments.createdAt },
    defaultSort: "id",
    idColumn: policyAssignments.id,
    search: {
      describe: "Substring of the description",
      build: (term) => containsText(policyAssignments.description, term),
    },
  },
  reaches: async (_db, ids) => assignmentsReach(ids),
  visibleTo: visibleAssignments,
  async serialize(db, rows, scope) {
    const ids = [...new Set((rows as AssignmentRow[]).map((r) => r.policyId))];
    const mine = await inScopeDeviceIds(db, [...new Set((rows as AssignmentRow[]).flatMap((r) => r.deviceIds))], scope);
    const names = new Map(
      (ids.length
        ? await db.select({ id: policies.id, name: policies.name }).from(policies).where(inArray(policies.id, ids))
        : []
      ).map((p) => [p.id, p.name]),
    );
    return (rows as AssignmentRow[]).map((r) => ({
      id: r.id,
      policy_id: r.policyId,
      policy_name: names.get(r.policyId) ?? "",
      description: r.description,
      scope: r.scope,
      devices: mine ? r.deviceIds.filter((id) => mine.has(id)) : r.deviceIds,
      categories: r.categoryIds,
      tags: r.tagIds,
      command: r.command,
      enabled: r.enabled,
      run_on_backup: r.runOnBackup,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const patch = ctx.mode === "patch";
    const values: Partial<typeof policyAssignments.$inferInsert> = patch
      ? {}
      : { description: "", command: null, enabled: true, runOnBackup: true };
    if (input.policy_id !== undefined) {
      const [policy] = await ctx.tx.select({ id: policies.id }).from(policies).where(eq(policies.id, input.policy_id));
      if (!policy) ctx.bag.add("policy_id", `policy_id ${input.policy_id} is not an existing policy`);
      values.policyId = input.policy_id;
    }
    if (input.description !== undefined) values.description = input.description;
    if (input.command !== undefined) values.command = input.command;
    if (input.enabled !== undefined) values.enabled = input.enabled;
    if (input.run_on_backup !== undefined) values.runOnBackup = input.run_on_backup;
    const scope = input.scope ?? (existing?.scope as AssignmentRow["scope"]);
    values.scope = scope;
    // The lists a scope does not use are stored empty; the one it uses must name records that exist.
    for (const list of LISTS) {
      const sent = input[list.field];
      if (list.scope !== scope) {
        if (sent?.length) ctx.bag.add(list.field, `${list.field} must be empty for scope ${scope}`);
        values[list.column] = [];
        continue;
      }
      const wanted =
        sent === undefined
          ? patch && existing?.scope === scope
            ? (existing[list.column] as number[])
            : []
          : [...new Set(sent)].sort((a, b) => a - b);
      const found = await existingIds(ctx.tx, list.table, wanted);
      const unknown = wanted.filter((id) => !found.has(id));
      if (unknown.length)
        ctx.bag.add(
          list.field,
          `${list.field} has unknown ${list.singular} id${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}`,
        );
      if (!wanted.length)
        ctx.bag.add(list.field, `${list.field} must list at least one ${list.singular} id for scope ${scope}`);
      values[list.column] = wanted;
    }
    return values;
  },
  descriptions: {
    create:
      "scope says which list names the covered devices (devices, categories, tags; all covers every device). Left out: command is each device's configuration command (its template's config_command, else the first command its category or template runs), enabled and run_on_backup are true.",
    delete: "The assignment's results go with it.",
  },
});
