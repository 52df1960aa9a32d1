import { z } from "@hono/zod-openapi";
import { count, inArray, sql } from "drizzle-orm";
import { ABILITIES, isAbility } from "../../platform/auth/abilities.ts";
import type { DbOrTx } from "../../db/client.ts";
import { categories, roles, tags, users } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { booleanFilter, idFilter } from "../../platform/http/filters.ts";
import { actorGrant, assertWithin, grantOf, scopeOf } from "./privilege.ts";
import { plural } from "../../kernel/words.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

const Scope = z
  .object({
    all: z.boolean().openapi({
      description: "true: every device; false: only devices with any of tag_ids or in any of category_ids",
    }),
    tag_ids: z.array(z.number().int()),
    category_ids: z.array(z.number().int()),
  })
  .openapi("RoleScope");

const Role = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    builtin: z.boolean(),
    permissions: z.array(z.string()).openapi({ example: ["devices.read", "configs.read"] }),
    scope: Scope,
    users_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Role");

const ids = (what: string) =>
  z
    .array(z.number().int("must be a whole number").positive("must be a positive id"))
    .max(1000, "must have at most 1000 items")
    .optional()
    .openapi({ description: `Ids of existing ${what}`, example: [1] });

const ScopeInput = z
  .object({
    all: z
      .boolean()
      .optional()
      .openapi({ description: "Every device; when left out, true unless tag_ids or category_ids are given" }),
    tag_ids: ids("tags"),
    category_ids: ids("categories"),
  })
  .openapi("RoleScopeInput");

const RoleInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(64, "must be at most 64 characters")).openapi({
      example: "ams-operators",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Operators of the Amsterdam site" }),
    permissions: z
      .array(z.string())
      .max(ABILITIES.length * 2, `must have at most ${ABILITIES.length * 2} items`)
      .openapi({
        description: `Abilities from the catalogue: ${ABILITIES.join(", ")}`,
        example: ["devices.read", "devices.write", "configs.read"],
      }),
    scope: ScopeInput.optional().openapi({
      description:
        "Which devices holders see; left out on create or PUT: every device. Sent on PATCH: replaces the whole scope.",
    }),
  })
  .openapi("RoleInput");

type RoleRow = typeof roles.$inferSelect;
type ScopeIn = z.infer<typeof ScopeInput>;

async function userCounts(db: DbOrTx, ids: number[]): Promise<Map<number, number>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select({ id: users.roleId, n: count() })
    .from(users)
    .where(inArray(users.roleId, ids))
    .groupBy(users.roleId);
  return new Map(rows.map((r) => [r.id, r.n]));
}

async function missingIds(db: DbOrTx, table: typeof tags | typeof categories, wanted: number[]): Promise<number[]> {
  if (!wanted.length) return [];
  const found = new Set(
    (await db.select({ id: table.id }).from(table).where(inArray(table.id, wanted))).map((r) => r.id),
  );
  return wanted.filter((id) => !found.has(id));
}

/** Checks the sent scope and turns it into column values; tags and categories it names must exist. */
async function scopeValues(scope: ScopeIn, ctx: WriteCtx) {
  const tagIds = [...new Set(scope.tag_ids ?? [])];
  const categoryIds = [...new Set(scope.category_ids ?? [])];
  const narrowed = tagIds.length > 0 || categoryIds.length > 0;
  const all = scope.all ?? !narrowed;
  if (all && narrowed)
    ctx.bag.add("scope.all", "scope.all must be false when scope.tag_ids or scope.category_ids are given");
  const badTags = await missingIds(ctx.tx, tags, tagIds);
  if (badTags.length) ctx.bag.add("scope.tag_ids", `scope.tag_ids has ids that are not tags: ${badTags.join(", ")}`);
  const badCategories = await missingIds(ctx.tx, categories, categoryIds);
  if (badCategories.length)
    ctx.bag.add(
      "scope.category_ids",
      `scope.category_ids has ids that are not categories: ${badCategories.join(", ")}`,
    );
  return { scopeAll: all, scopeTagIds: all ? [] : tagIds, scopeCategoryIds: all ? [] : categoryIds };
}

function permissionValues(sent: string[], ctx: WriteCtx): string[] {
  const unknown = [...new Set(sent.filter((p) => !isAbility(p)))];
  if (unknown.length) {
    ctx.bag.add(
      "permissions",
      `permissions has unknown abilit${unknown.length === 1 ? "y" : "ies"} ${unknown.join(", ")}; use any of: ${ABILITIES.join(", ")}`,
    );
  }
  // Stored in catalogue order, once each, so two equal sets always look the same.
  return ABILITIES.filter((a) => sent.includes(a));
}

export const rolesResource = defineResource({
  tag: "Roles",
  path: "/roles",
  singular: "role",
  plural: "roles",
  resource: "users",
  table: roles,
  output: Role,
  input: RoleInput,
  listSpec: {
    fields: Object.keys(Role.shape),
    filters: {
      id: idFilter(roles.id, "id", "Role id"),
      name: nameFilter(roles.nameKey),
      builtin: booleanFilter(
        roles.builtin,
        "builtin",
        "true: the built-in admin, operator and viewer; false: custom roles",
      ),
      permission: {
        describe: "Roles that grant this ability, e.g. users.write",
        example: "users.write",
        build: (v) =>
          sql`exists (select 1 from json_each(${roles.permissions}) where json_each.value in (${sql.join(
            v.map((p) => sql`${p}`),
            sql`, `,
          )}))`,
      },
    },
    sorts: { id: roles.id, name: sql`lower(${roles.name})`, created_at: roles.createdAt, updated_at: roles.updatedAt },
    defaultSort: "id",
    idColumn: roles.id,
    search: {
      describe: "Substring of the name or description",
      build: (term) => sql`(${containsText(roles.name, term)} or ${containsText(roles.description, term)})`,
    },
  },
  async serialize(db, rows) {
    const counts = await userCounts(
      db,
      rows.map((r) => r.id),
    );
    return (rows as RoleRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      builtin: r.builtin,
      permissions: r.permissions,
      scope: { all: r.scopeAll, tag_ids: r.scopeTagIds, category_ids: r.scopeCategoryIds },
      users_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const actor = await actorGrant(ctx.tx, ctx.auth);
    if (existing) {
      assertWithin(
        actor,
        grantOf(existing as RoleRow),
        (lacks) => `Role '${existing.name}' grants more than you hold (${lacks}); it cannot be changed by you`,
      );
    }
    const nameKey = await checkUniqueName(ctx, roles.nameKey, roles.id, input.name, existing?.id ?? null, "name");
    const permissions = input.permissions === undefined ? undefined : permissionValues(input.permissions, ctx);
    const scope =
      input.scope !== undefined || ctx.mode !== "patch" ? await scopeValues(input.scope ?? {}, ctx) : undefined;
    ctx.bag.throwIfAny();
    assertWithin(
      actor,
      { permissions, scope: scope && scopeOf(scope) },
      (lacks) => `A role you create or change cannot grant more than you hold: ${lacks}`,
    );
    const values: Record<string, unknown> = { ...scope };
    if (input.name !== undefined) Object.assign(values, { name: input.name, nameKey });
    if (input.description !== undefined || ctx.mode !== "patch") values.description = input.description ?? "";
    if (permissions) values.permissions = permissions;
    return values;
  },
  async beforeDelete(rows, ctx) {
    const actor = await actorGrant(ctx.tx, ctx.auth);
    for (const row of rows as RoleRow[]) {
      assertWithin(
        actor,
        grantOf(row),
        (lacks) => `Role '${row.name}' grants more than you hold (${lacks}); it cannot be deleted by you`,
      );
    }
    const held = [
      ...(
        await userCounts(
          ctx.tx,
          rows.map((r) => r.id),
        )
      ).entries(),
    ].filter(([, n]) => n > 0);
    if (held.length) {
      const [id, n] = held[0]!;
      const name = rows.find((r) => r.id === id)!.name as string;
      throw ApiError.conflict(`Role '${name}' is held by ${plural(n, "user")}; give them another role first`);
    }
  },
  readOnlyReason: (row) => (row.builtin ? `built-in role ${row.name} is read-only; create a custom role` : undefined),
  descriptions: {
    create:
      "permissions are abilities from the catalogue (an unknown one is a 422 that lists the catalogue); scope is {all, tag_ids, category_ids} " +
      "and the tags and categories it names must exist. A caller cannot create a role that grants an ability their own role lacks, " +
      "or devices outside their own scope: 403 naming what is missing.",
    update:
      "Built-in roles (admin, operator, viewer) are read-only: 403. PUT returns description and scope to their defaults when left out; " +
      "PATCH changes only what is sent (a sent scope replaces the whole scope). The new permissions and scope must stay within the caller's " +
      "own role (403), and a role granting more than the caller holds cannot be changed by them (403).",
    delete:
      "Refused with 409 while any user holds the role (the message says how many); give those users another role first. " +
      "Built-in roles cannot be deleted (403), nor can a role granting more than the caller holds (403).",
  },
});
