import { z } from "@hono/zod-openapi";
import { count, eq, inArray, or, sql } from "drizzle-orm";
import { hashPassword, Password } from "../../platform/auth/passwords.ts";
import { endUserSessions } from "../../platform/auth/sessions.ts";
import { USERNAME } from "../../platform/auth/users.ts";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { apiTokens, roles, users } from "../../db/schema/index.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { actorGrant, assertWithin, grantOf } from "../roles/index.ts";
import { booleanFilter, idFilter } from "../../platform/http/filters.ts";
import { assertAdminRemains, assertCanManage, assertNotSelf } from "./guards.ts";
import { plural } from "../../kernel/words.ts";
import { singleLine } from "../../platform/http/text.ts";

export { MIN_PASSWORD_LENGTH as MIN_PASSWORD } from "../../kernel/password-rule.ts";
import { MIN_PASSWORD_LENGTH as MIN_PASSWORD } from "../../kernel/password-rule.ts";

export const User = z
  .object({
    id: z.number().int(),
    username: z.string(),
    email: z.string(),
    role: z.string().openapi({ description: "The role's name" }),
    role_id: z.number().int(),
    enabled: z.boolean().openapi({ description: "A disabled user's API tokens answer 401" }),
    last_login_at: z.string().nullable(),
    auth_source: z.enum(["local", "ldap", "oidc"]).openapi({
      description:
        "Where the user's password is checked: here (local), the directory (ldap), or the single sign-on provider (oidc); ldap and oidc users are created at their first sign-in, their role following their groups",
    }),
    second_factor: z
      .boolean()
      .openapi({ description: "The user has a TOTP second factor (POST /users/{id}/second-factor/reset removes it)" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("User");

export { Password };

const UserInput = z
  .object({
    username: z
      .string()
      .regex(USERNAME.pattern, USERNAME.rule)
      .openapi({ description: "Unique, compared case-insensitively", example: "jdoe" }),
    email: singleLine(
      z
        .string()
        .trim()
        .max(254, "must be at most 254 characters")
        .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address"),
    ).openapi({ description: "Unique, compared case-insensitively", example: "jdoe@example.com" }),
    password: Password.optional().openapi({
      description: `Write-only, at least ${MIN_PASSWORD} characters; required on create. Sent on PUT or PATCH it changes the password.`,
      example: "a-long-passphrase",
    }),
    role_id: z
      .number({ error: "must be the numeric id of a role" })
      .int("must be a whole number")
      .positive("must be a positive id")
      .optional()
      .openapi({ description: "The user's role; give this or role", example: 2 }),
    role: z
      .string()
      .min(1, "must not be empty")
      .optional()
      .openapi({ description: "The user's role by name; give this or role_id", example: "operator" }),
  })
  .openapi("UserInput");

type UserRow = typeof users.$inferSelect;
type RoleRow = typeof roles.$inferSelect;
type UserIn = Partial<z.infer<typeof UserInput>>;

async function roleChoices(db: DbOrTx): Promise<string> {
  const all = await db.select({ id: roles.id, name: roles.name }).from(roles).orderBy(roles.id);
  return `use one of: ${all.map((r) => `${r.name} (${r.id})`).join(", ")}`;
}

/** The role the body names, by id or by name; problems go into the bag. */
async function resolveRole(input: UserIn, ctx: WriteCtx): Promise<RoleRow | undefined> {
  let byId: RoleRow | undefined;
  let byName: RoleRow | undefined;
  if (input.role_id !== undefined) {
    [byId] = await ctx.tx.select().from(roles).where(eq(roles.id, input.role_id));
    if (!byId) ctx.bag.add("role_id", `role_id ${input.role_id} is not an existing role; ${await roleChoices(ctx.tx)}`);
  }
  if (input.role !== undefined) {
    [byName] = await ctx.tx
      .select()
      .from(roles)
      .where(eq(roles.nameKey, nameKey(input.role)));
    if (!byName) ctx.bag.add("role", `role '${input.role}' does not exist; ${await roleChoices(ctx.tx)}`);
  }
  if (byId && byName && byId.id !== byName.id)
    ctx.bag.add(
      "role",
      `role '${input.role}' is not role ${input.role_id}; send role_id or role, not two different roles`,
    );
  if (input.role_id === undefined && input.role === undefined && ctx.mode !== "patch")
    ctx.bag.add("role_id", "role_id is required (or role, the role's name)");
  return byId ?? byName;
}

export const usersResource = defineResource({
  tag: "Users",
  path: "/users",
  singular: "user",
  plural: "users",
  resource: "users",
  table: users,
  output: User,
  input: UserInput,
  listSpec: {
    fields: Object.keys(User.shape),
    filters: {
      id: idFilter(users.id, "id", "User id"),
      username: nameFilter(users.usernameKey, "Exact username (any case)"),
      email: nameFilter(users.emailKey, "Exact email address (any case)"),
      role: {
        describe: "Role name (any case)",
        build: (v) =>
          inArray(
            users.roleId,
            sql`(select ${roles.id} from ${roles} where ${inArray(roles.nameKey, v.map(nameKey))})`,
          ),
      },
      role_id: idFilter(users.roleId, "role_id", "Role id"),
      enabled: booleanFilter(users.enabled, "enabled"),
    },
    sorts: {
      id: users.id,
      username: sql`lower(${users.username})`,
      email: sql`lower(${users.email})`,
      last_login_at: users.lastLoginAt,
      created_at: users.createdAt,
      updated_at: users.updatedAt,
    },
    defaultSort: "username",
    idColumn: users.id,
    search: {
      describe: "Substring of the username or email",
      build: (term) => or(containsText(users.username, term), containsText(users.email, term))!,
    },
  },
  async serialize(db, rows) {
    const list = rows as UserRow[];
    const roleIds = [...new Set(list.map((r) => r.roleId))];
    const names = new Map(
      roleIds.length
        ? (await db.select({ id: roles.id, name: roles.name }).from(roles).where(inArray(roles.id, roleIds))).map(
            (r) => [r.id, r.name],
          )
        : [],
    );
    // Built field by field: the password hash never leaves this module.
    return list.map((r) => ({
      id: r.id,
      username: r.username,
      email: r.email,
      role: names.get(r.roleId) ?? "",
      role_id: r.roleId,
      enabled: r.enabled,
      last_login_at: r.lastLoginAt?.toISOString() ?? null,
      auth_source: r.authSource,
      second_factor: r.totpSecretEnc !== null,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const current = existing as UserRow | null;
    if (current) await assertCanManage(ctx.tx, ctx.auth, [current], "change");
    const usernameKey = await checkUniqueName(
      ctx,
      users.usernameKey,
      users.id,
      input.username,
      current?.id ?? null,
      "username",
    );
    const emailKey = await checkUniqueName(ctx, users.emailKey, users.id, input.email, current?.id ?? null, "email");
    const role = await resolveRole(input, ctx);
    if (ctx.mode === "create" && input.password === undefined) ctx.bag.add("password", "password is required");
    ctx.bag.throwIfAny();

    const values: Record<string, unknown> = {};
    if (input.username !== undefined) Object.assign(values, { username: input.username, usernameKey });
    if (input.email !== undefined) Object.assign(values, { email: input.email, emailKey });
    if (role && role.id !== current?.roleId) {
      assertWithin(
        await actorGrant(ctx.tx, ctx.auth),
        grantOf(role),
        (lacks) => `You cannot give role '${role.name}': it grants more than you hold (${lacks})`,
      );
      if (current) await assertAdminRemains(ctx.tx, [current], "give another user the admin role first");
      values.roleId = role.id;
    }
    if (input.password !== undefined) values.passwordHash = await hashPassword(input.password);
    return values;
  },
  async afterWrite(id, input, ctx) {
    if (ctx.mode === "create" || input.password === undefined) return;
    await endUserSessions(ctx.tx, [id]);
    await recordActivity(
      ctx.tx,
      ctx.auth,
      { action: "user.password_change", subjectType: "user", subjectId: id },
      ctx.now,
    );
  },
  async beforeDelete(rows, ctx) {
    const targets = rows as UserRow[];
    const ids = targets.map((u) => u.id);
    assertNotSelf(ctx.auth, ids, "delete");
    await assertCanManage(ctx.tx, ctx.auth, targets, "delete");
    await assertAdminRemains(ctx.tx, targets, "enable or create another admin first");
    const [tokens] = await ctx.tx.select({ n: count() }).from(apiTokens).where(inArray(apiTokens.userId, ids));
    const n = tokens?.n ?? 0;
    // The rows go with the user through ON DELETE CASCADE; the answer says how many went.
    return n ? `their ${plural(n, "API token")} ${n === 1 ? "was" : "were"} deleted too` : "they had no API tokens";
  },
  descriptions: {
    create:
      `password is write-only (at least ${MIN_PASSWORD} characters) and stored only as a hash. Give the role as role_id or role (its name). ` +
      "A caller cannot give a role that grants an ability their own role lacks, or devices outside their own scope: 403 naming what is missing. " +
      "New users are enabled.",
    update:
      "PUT: username, email and a role are required; the password is kept unless sent. PATCH: only the fields sent change. " +
      "A sent password replaces the old one, ends the user's web sessions, and is audited as user.password_change, never with its value. " +
      "A new role follows the create rule (403); a user whose role grants more than the caller holds cannot be changed by them (403); " +
      "the last enabled admin cannot be given another role (409). Enable or disable with POST /users/{id}/enable and /disable.",
    delete:
      "Deletes the user together with all their API tokens and web sessions; the answer says how many tokens went. Activity log entries keep the user's name. " +
      "Refused with 409 for the caller's own user and for the last enabled user of the admin role, and with 403 for a user whose role " +
      "grants more than the caller holds.",
  },
  updateConflict: "The last enabled admin given another role",
});

export type UserOut = z.infer<typeof User>;
/** One user as the API shows it (the resource's show, typed). */
// Users carry no device counts, so the scope does not change how one is shown.
export const showUser = async (db: DbOrTx, id: number) => (await usersResource.show(db, id, { all: true })) as UserOut;
