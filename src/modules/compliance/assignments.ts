import { z } from "@hono/zod-openapi";
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { assignmentCoversDevice } from "./coverage.ts";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "../../db/client.ts";
import { ASSIGNMENT_SCOPES, categories, devices, policies, policyAssignments, tags } from "../../db/schema/index.ts";
import { booleanFilter, idFilter } from "../../platform/http/filters.ts";
import { containsText } from "../../platform/http/list.ts";
import { defineResource } from "../../platform/http/resource.ts";

export const Assignment = z
  .object({
    id: z.number().int(),
    policy_id: z.number().int(),
    policy_name: z.string(),
    description: z.string(),
    scope: z
      .enum(ASSIGNMENT_SCOPES)
      .openapi({ description: "Which list names the devices covered: devices, categories, tags, or all devices" }),
    devices: z.array(z.number().int()),
    categories: z.array(z.number().int()),
    tags: z.array(z.number().int()),
    command: z.string().nullable().openapi({
      description: "The command whose latest configuration is checked; null: each device's configuration command",
    }),
    enabled: z.boolean(),
    run_on_backup: z.boolean().openapi({ description: "Evaluate after every download that stores a new version" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PolicyAssignment");

const ids = (what: string) =>
  z
    .array(
      z
        .number({ error: `must hold ${what} ids` })
        .int("must hold whole numbers")
        .positive("must hold positive ids"),
    )
    .max(10_000, "must have at most 10000 items")
    .optional();

export const AssignmentInput = z
  .object({
    policy_id: z
      .number({ error: "must be a policy id" })
      .int("must be a whole number")
      .positive("must be a positive id")
      .openapi({ example: 1 }),
    description: z
      .string()
      .max(1000, "must be at most 1000 characters")
      .optional()
      .openapi({ example: "Every core router" }),
    scope: z.enum(ASSIGNMENT_SCOPES, { error: `must be one of: ${ASSIGNMENT_SCOPES.join(", ")}` }).openapi({
      description: "devices, categories or tags (the matching list must name at least one), or all devices",
      example: "tags",
    }),
    devices: ids("device").openapi({ description: "Device ids (scope devices)", example: [] }),
    categories: ids("category").openapi({ description: "Category ids (scope categories)", example: [] }),
    tags: ids("tag").openapi({ description: "Tag ids (scope tags)", example: [3] }),
    command: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      .nullable()
      .optional()
      .openapi({
        description: "Command whose configuration is checked; left out or null: each device's configuration command",
        example: "show running-config",
      }),
    enabled: z.boolean().optional().openapi({ example: true }),
    run_on_backup: z.boolean().optional().openapi({ description: "Default true", example: true }),
  })
  .openapi("PolicyAssignmentInput");

type AssignmentRow = typeof policyAssignments.$inferSelect;
const LISTS = [
  { field: "devices", column: "deviceIds", table: devices, scope: "devices", singular: "device" },
  { field: "categories", column: "categoryIds", table: categories, scope: "categories", singular: "category" },
  { field: "tags", column: "tagIds", table: tags, scope: "tags", singular: "tag" },
] as const;

async function existingIds(db: DbOrTx, table: { id: SQLiteColumn }, wanted: number[]): Promise<Set<number>> {
  if (!wanted.length) return new Set();
  const rows = await db
    .select({ id: table.id })
    .from(table as typeof devices)
    .where(inArray(table.id, wanted));
  return new Set(rows.map((r) => r.id));
}

/** The devices these assignments cover: their evaluations and results are about those devices. */
export const assignmentsReach = (ids: number[]): SQL =>
  sql`exists (select 1 from ${policyAssignments} where ${and(inArray(policyAssignments.id, ids), assignmentCoversDevice)})`;

/**
 * A scoped caller sees an assignment that covers a device of theirs (or, empty now, none at all), and of its
 * device list only their own devices: one about other devices only answers 404, as those devices do.
 */
export function visibleAssignments(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  const covers = (within: SQL | undefined) =>
    sql`exists (select 1 from ${devices} where ${and(assignmentCoversDevice, within)})`;
  return sql`(${covers(deviceScopeCondition(scope))} or not ${covers(undefined)})`;
}

async function inScopeDeviceIds(db: DbOrTx, ids: number[], scope: DeviceScope): Promise<Set<number> | undefined> {
  if (scope.all) return undefined;
  if (!ids.length) return new Set();
  return new Set(
    (
      await db
        .select({ id: devices.id })
        .from(devices)
        .where(and(inArray(devices.id, ids), deviceScopeCondition(scope)))
    ).map((r) => r.id),
  );
}

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
