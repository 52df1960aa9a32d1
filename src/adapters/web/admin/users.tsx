import type { Context, Hono } from "hono";
import { asc } from "drizzle-orm";
import { categories, roles, tags, users } from "../../../db/schema/index.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { zodToApiError } from "../../../platform/http/validation.ts";
import { rolesResource } from "../../../modules/roles/index.ts";
import { changePassword, setUserEnabled } from "../../../modules/users/index.ts";
import { showUser, usersResource, type UserOut } from "../../../modules/users/index.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { checkedForm, csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

/** The API's services take the API's context; a page's carries the same services and the same `auth`. */
const asApi = (c: Context<WebEnv>) => c as unknown as Context<AppEnv>;

type Form = Record<string, string | File | (string | File)[]>;
const text = (form: Form, name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
const numbers = (form: Form, name: string) =>
  ([] as unknown[])
    .concat(form[name] ?? [])
    .map(Number)
    .filter((n) => Number.isSafeInteger(n) && n > 0);

/** The page's form, checked against the session's CSRF token; null after answering a refusal. */
async function formOf(c: Context<WebEnv>): Promise<Form | null> {
  return checkedForm(c, c.var.session.csrfToken);
}

function parsed<
  S extends {
    safeParse(v: unknown): { success: true; data: unknown } | { success: false; error: import("zod").ZodError };
  },
>(schema: S, value: unknown) {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToApiError(result.error);
  return result.data as Record<string, unknown>;
}

/** What a finished write says on the page it returns to; only these words, so an address cannot put others there. */
const DONE: Record<string, string> = {
  created: "User created.",
  enabled: "User enabled.",
  disabled: "User disabled; their web sessions ended.",
  password: "Password reset; the user's web sessions ended.",
  role: "Role changed.",
  scope: "Role scope changed.",
};

/**
 * Users and roles for those whose role holds users.read (writes: users.write), through the API's own services:
 * create, enable/disable, reset a password, give a role, and set a custom role's scope (tags, categories).
 */
export function registerUserAdminPage(web: Hono<WebEnv>): void {
  web.get("/admin/users", requirePage("users.read"), async (c) => {
    const { db } = c.var.services;
    const [userRows, roleRows, tagRows, categoryRows] = await Promise.all([
      db.select().from(users).orderBy(asc(users.usernameKey)),
      db.select().from(roles).orderBy(asc(roles.id)),
      db.select({ id: tags.id, name: tags.name }).from(tags).orderBy(asc(tags.nameKey)),
      db.select({ id: categories.id, name: categories.name }).from(categories).orderBy(asc(categories.nameKey)),
    ]);
    // Users are few (people, not devices): each shown as the API shows it.
    const list: UserOut[] = await Promise.all(userRows.map((u) => showUser(db, u.id)));
    const canWrite = c.var.auth.abilities.has("users.write");
    const csrf = c.var.session.csrfToken;
    const done = DONE[c.req.query("done") ?? ""];
    const tagName = new Map(tagRows.map((t) => [t.id, t.name]));
    const categoryName = new Map(categoryRows.map((r) => [r.id, r.name]));
    const RoleSelect = (p: { id: string; selected?: number }) => (
      <select id={p.id} name="role_id">
        {roleRows.map((r) => (
          <option value={String(r.id)} selected={r.id === p.selected}>
            {r.name}
          </option>
        ))}
      </select>
    );
    return renderPage(c, 200, {
      title: "Users and roles",
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <h1>Users</h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <div class="table-wrap">
              <table class="users">
                <thead>
                  <tr>
                    <th>User</th>
                    <th>Role</th>
                    <th>State</th>
                    <th>Last login</th>
                    {canWrite && <th>Password</th>}
                  </tr>
                </thead>
                <tbody>
                  {list.map((u) => (
                    <tr id={`user-${u.id}`}>
                      <td>
                        <strong>{u.username}</strong>
                        <div class="muted">{u.email}</div>
                      </td>
                      <td>
                        {canWrite ? (
                          <CsrfForm action={`/admin/users/${u.id}/role`} csrf={csrf} class="row-form">
                            <label for={`role-${u.id}`} class="visually-hidden">{`Role of ${u.username}`}</label>
                            <RoleSelect id={`role-${u.id}`} selected={u.role_id} />
                            <button type="submit" class="secondary">
                              Change
                            </button>
                          </CsrfForm>
                        ) : (
                          u.role
                        )}
                      </td>
                      <td>
                        <span class={`badge ${u.enabled ? "active" : "disabled"}`}>
                          {u.enabled ? "enabled" : "disabled"}
                        </span>
                        {canWrite && u.id !== c.var.session.userId && (
                          <CsrfForm
                            action={`/admin/users/${u.id}/${u.enabled ? "disable" : "enable"}`}
                            csrf={csrf}
                            class="inline"
                            confirm={
                              u.enabled
                                ? `Disable ${u.username}? Their sessions and API tokens stop working.`
                                : undefined
                            }
                          >
                            {" "}
                            <button type="submit" class={u.enabled ? "danger" : "secondary"}>
                              {u.enabled ? "Disable" : "Enable"}
                            </button>
                          </CsrfForm>
                        )}
                      </td>
                      <td>
                        <Time at={u.last_login_at ? new Date(u.last_login_at) : null} none="never" />
                      </td>
                      {canWrite && (
                        <td>
                          <CsrfForm action={`/admin/users/${u.id}/password`} csrf={csrf} class="row-form">
                            <label
                              for={`password-${u.id}`}
                              class="visually-hidden"
                            >{`New password for ${u.username}`}</label>
                            <input
                              type="password"
                              id={`password-${u.id}`}
                              name="password"
                              autocomplete="new-password"
                              minlength={12}
                              placeholder="New password"
                              required
                            />
                            <button type="submit" class="secondary">
                              Reset
                            </button>
                          </CsrfForm>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          {canWrite && (
            <section class="card">
              <h2>New user</h2>
              <CsrfForm action="/admin/users" csrf={csrf} class="grid-form">
                <div>
                  <label for="new-username">Username</label>
                  <input type="text" id="new-username" name="username" required autocomplete="off" />
                </div>
                <div>
                  <label for="new-email">Email</label>
                  <input type="text" id="new-email" name="email" required autocomplete="off" />
                </div>
                <div>
                  <label for="new-password">Password (at least 12 characters)</label>
                  <input
                    type="password"
                    id="new-password"
                    name="password"
                    minlength={12}
                    required
                    autocomplete="new-password"
                  />
                </div>
                <div>
                  <label for="new-role">Role</label>
                  <RoleSelect id="new-role" selected={roleRows.find((r) => r.builtin && r.name === "viewer")?.id} />
                </div>
                <div class="actions">
                  <button type="submit">Create user</button>
                </div>
              </CsrfForm>
            </section>
          )}
          <section class="card" id="roles">
            <h2>Roles and scopes</h2>
            <p class="muted">
              A role's scope decides which devices its users see: every device, or those carrying any of its tags or in
              any of its categories. Built-in roles see every device.
            </p>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Role</th>
                    <th>Abilities</th>
                    <th>Scope</th>
                  </tr>
                </thead>
                <tbody>
                  {roleRows.map((r) => (
                    <tr id={`role-row-${r.id}`}>
                      <td>
                        <strong>{r.name}</strong>
                        {r.builtin && <span class="badge">built-in</span>}
                      </td>
                      <td>{`${r.permissions.length} abilities`}</td>
                      <td>
                        {r.scopeAll
                          ? "Every device"
                          : [
                              ...r.scopeTagIds.map((id) => `tag ${tagName.get(id) ?? id}`),
                              ...r.scopeCategoryIds.map((id) => `category ${categoryName.get(id) ?? id}`),
                            ].join(", ") || "No device"}
                        {canWrite && !r.builtin && (
                          <CsrfForm action={`/admin/roles/${r.id}/scope`} csrf={csrf} class="scope-form">
                            <label class="check">
                              <input type="checkbox" name="all" value="true" checked={r.scopeAll} /> Every device
                            </label>
                            <label for={`scope-tags-${r.id}`}>Tags</label>
                            <select
                              id={`scope-tags-${r.id}`}
                              name="tag_ids"
                              multiple
                              size={Math.min(5, Math.max(2, tagRows.length))}
                            >
                              {tagRows.map((t) => (
                                <option value={String(t.id)} selected={r.scopeTagIds.includes(t.id)}>
                                  {t.name}
                                </option>
                              ))}
                            </select>
                            <label for={`scope-categories-${r.id}`}>Categories</label>
                            <select
                              id={`scope-categories-${r.id}`}
                              name="category_ids"
                              multiple
                              size={Math.min(5, Math.max(2, categoryRows.length))}
                            >
                              {categoryRows.map((k) => (
                                <option value={String(k.id)} selected={r.scopeCategoryIds.includes(k.id)}>
                                  {k.name}
                                </option>
                              ))}
                            </select>
                            <div class="actions">
                              <button type="submit" class="secondary">
                                Save scope
                              </button>
                            </div>
                          </CsrfForm>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      ),
    });
  });

  const back = (c: Context<WebEnv>, done: keyof typeof DONE) => c.redirect(`/admin/users?done=${done}`, 303);

  web.post("/admin/users", requirePage("users.write"), async (c) => {
    const form = await formOf(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const input = parsed(usersResource.input, {
      username: text(form, "username") ?? "",
      email: text(form, "email") ?? "",
      password: text(form, "password") ?? "",
      role_id: Number(text(form, "role_id")),
    });
    await usersResource.save(asApi(c), input, null, "create");
    return back(c, "created");
  });

  web.post("/admin/users/:id/:action{enable|disable}", requirePage("users.write"), async (c) => {
    if (!(await formOf(c))) return csrfRefusal(c, c.var.session);
    const enable = c.req.param("action") === "enable";
    await setUserEnabled(asApi(c), pathId(c.req.param("id"), "User"), enable);
    return back(c, enable ? "enabled" : "disabled");
  });

  web.post("/admin/users/:id/password", requirePage("users.write"), async (c) => {
    const form = await formOf(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { password } = parsed(usersResource.input.pick({ password: true }).required(), {
      password: text(form, "password") ?? "",
    });
    await changePassword(asApi(c), pathId(c.req.param("id"), "User"), password as string);
    return back(c, "password");
  });

  web.post("/admin/users/:id/role", requirePage("users.write"), async (c) => {
    const form = await formOf(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const input = parsed(usersResource.input.partial(), { role_id: Number(text(form, "role_id")) });
    await usersResource.save(asApi(c), input, pathId(c.req.param("id"), "User"), "patch");
    return back(c, "role");
  });

  web.post("/admin/roles/:id/scope", requirePage("users.write"), async (c) => {
    const form = await formOf(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Role");
    const all = text(form, "all") === "true";
    const scope = all
      ? { all: true }
      : { all: false, tag_ids: numbers(form, "tag_ids"), category_ids: numbers(form, "category_ids") };
    await rolesResource.save(asApi(c), parsed(rolesResource.input.partial(), { scope }), id, "patch");
    return back(c, "scope");
  });
}
