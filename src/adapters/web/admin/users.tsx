import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { rolesResource } from "../../../modules/roles/index.ts";
import { changePassword, setUserEnabled } from "../../../modules/users/index.ts";
import { showUser, usersResource, type UserOut } from "../../../modules/users/index.ts";
import { plural } from "../../../kernel/words.ts";
import { asApi } from "../api-context.ts";
import { firstRows, targetChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { parsedBy, readForm, text } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { mayChangeRole, registerRolePages, type RoleOut } from "./roles.tsx";

/** What a finished write says on the page it returns to; only these words, so an address cannot put others there. */
const DONE: Record<string, string> = {
  created: "User created.",
  enabled: "User enabled.",
  disabled: "User disabled; their web sessions ended.",
  password: "Password reset; the user's web sessions ended.",
  role: "Role changed.",
  deleted: "User deleted, with their API tokens and web sessions.",
  role_created: "Role added.",
  role_saved: "Role saved.",
  role_deleted: "Role deleted.",
};

/**
 * Users and roles for those whose role holds users.read (writes: users.write), through the API's own services:
 * create, enable/disable, reset a password, give a role, delete a user (after a confirmation page); roles are
 * added, edited and deleted on their own pages (roles.tsx).
 */
export function registerUserAdminPage(web: Hono<WebEnv>): void {
  registerRolePages(web);

  web.get("/admin/users", requirePage("users.read"), async (c) => {
    // Users and roles are few (people, not devices): the first 500 of each, as the API lists them.
    const [list, roleRows, targets] = await Promise.all([
      firstRows(c, usersResource, "username") as Promise<UserOut[]>,
      firstRows(c, rolesResource, "id") as Promise<RoleOut[]>,
      targetChoices(c),
    ]);
    const canWrite = c.var.auth.abilities.has("users.write");
    const csrf = c.var.session.csrfToken;
    const done = DONE[c.req.query("done") ?? ""];
    const tagName = new Map(targets.tags ?? []);
    const categoryName = new Map(targets.categories ?? []);
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
                        {canWrite && u.id !== c.var.session.userId && (
                          <>
                            {" "}
                            <a href={`/admin/users/${u.id}/delete`} class="delete-user">
                              Delete
                            </a>
                          </>
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
              A role's abilities decide what its users may do; its scope decides which devices they see: every device,
              or those carrying any of its tags or in any of its categories. Built-in roles see every device and cannot
              be changed.
            </p>
            {canWrite && (
              <p class="actions">
                <a class="button" href="/admin/roles/new">
                  Add a role
                </a>
              </p>
            )}
            <div class="table-wrap">
              <table id="role-list">
                <thead>
                  <tr>
                    <th>Role</th>
                    <th>Abilities</th>
                    <th>Scope</th>
                    <th>Users</th>
                    {canWrite && (
                      <th>
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {roleRows.map((r) => (
                    <tr id={`role-row-${r.id}`}>
                      <td>
                        <strong>{r.name}</strong>
                        {r.builtin && <span class="badge">built-in</span>}
                        {r.description && <div class="muted">{r.description}</div>}
                      </td>
                      <td title={r.permissions.join(", ")}>{plural(r.permissions.length, "ability", "abilities")}</td>
                      <td>
                        {r.scope.all
                          ? "Every device"
                          : [
                              ...r.scope.tag_ids.map((id) => `tag ${tagName.get(id) ?? id}`),
                              ...r.scope.category_ids.map((id) => `category ${categoryName.get(id) ?? id}`),
                            ].join(", ") || "No device"}
                      </td>
                      <td>{plural(r.users_count, "user")}</td>
                      {canWrite && (
                        <td>
                          {mayChangeRole(c, r) && (
                            <>
                              <a href={`/admin/roles/${r.id}/edit`}>Edit</a>{" "}
                              <a href={`/admin/roles/${r.id}/delete`}>Delete</a>
                            </>
                          )}
                        </td>
                      )}
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
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const input = parsedBy(usersResource.input, {
      username: text(form, "username") ?? "",
      email: text(form, "email") ?? "",
      password: text(form, "password") ?? "",
      role_id: Number(text(form, "role_id")),
    });
    await usersResource.save(asApi(c), input, null, "create");
    return back(c, "created");
  });

  web.post("/admin/users/:id/:action{enable|disable}", requirePage("users.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const enable = c.req.param("action") === "enable";
    await setUserEnabled(asApi(c), pathId(c.req.param("id"), "User"), enable);
    return back(c, enable ? "enabled" : "disabled");
  });

  web.post("/admin/users/:id/password", requirePage("users.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { password } = parsedBy(usersResource.input.pick({ password: true }).required(), {
      password: text(form, "password") ?? "",
    });
    await changePassword(asApi(c), pathId(c.req.param("id"), "User"), password as string);
    return back(c, "password");
  });

  web.post("/admin/users/:id/role", requirePage("users.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const input = parsedBy(usersResource.input.partial(), { role_id: Number(text(form, "role_id")) });
    await usersResource.save(asApi(c), input, pathId(c.req.param("id"), "User"), "patch");
    return back(c, "role");
  });

  const existing = async (c: Context<WebEnv>) => showUser(c.var.services.db, pathId(c.req.param("id")!, "User"));

  const confirmPage = (c: Context<WebEnv>, user: UserOut, refusal?: ApiError) =>
    renderPage(c, refusal ? (refusal.status as 403 | 409) : 200, {
      title: `Delete ${user.username}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete the user ${user.username}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {refusal.message}
            </p>
          )}
          <dl class="details">
            <dt>Email</dt>
            <dd>{user.email}</dd>
            <dt>Role</dt>
            <dd>{user.role}</dd>
          </dl>
          <p>
            The user is removed with their API tokens and web sessions; the activity log keeps their name. Disabling
            them instead keeps the account for later.
          </p>
          <CsrfForm action={`/admin/users/${user.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the user
              </button>
              <a href="/admin/users">Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });

  web.get("/admin/users/:id/delete", requirePage("users.write"), async (c) => confirmPage(c, await existing(c)));

  web.post("/admin/users/:id/delete", requirePage("users.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const user = await existing(c);
    try {
      await usersResource.remove(asApi(c), [user.id], false);
    } catch (err) {
      // Oneself or the last enabled administrator (409), a user beyond the caller's role (403): the API's words.
      if (err instanceof ApiError && (err.status === 409 || err.status === 403)) return confirmPage(c, user, err);
      throw err;
    }
    return back(c, "deleted");
  });
}
