import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { excess, rolesResource } from "../../../modules/roles/index.ts";
import { asApi } from "../api-context.ts";
import { targetChoices, type TargetChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  ids,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  texts,
  type FieldProblems,
} from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { AbilityGrid } from "../settings/tokens.tsx";
import { requirePage } from "../viewer.ts";

/** A role as the API shows it. */
export type RoleOut = {
  id: number;
  name: string;
  description: string;
  builtin: boolean;
  permissions: string[];
  scope: { all: boolean; tag_ids: number[]; category_ids: number[] };
  users_count: number;
};

/** What the form shows: as typed (or as stored), ids as strings. */
type RoleValues = {
  name: string;
  description: string;
  permissions: string[];
  all: boolean;
  tags: number[];
  categories: number[];
};

const FIELDS = ["name", "description", "permissions", "scope"];

/**
 * Whether the caller may change or delete a role: it must grant nothing beyond the caller's own role (the API
 * answers 403 otherwise), and built-in roles are read-only. The page offers the buttons only where this is true.
 */
export function mayChangeRole(c: Context<WebEnv>, role: RoleOut): boolean {
  if (role.builtin || !c.var.auth.abilities.has("users.write")) return false;
  const { scope } = role;
  return (
    excess(
      { permissions: [...c.var.auth.abilities], scope: c.var.auth.scope },
      {
        permissions: role.permissions,
        scope: scope.all ? { all: true } : { all: false, tagIds: scope.tag_ids, categoryIds: scope.category_ids },
      },
    ).length === 0
  );
}

function RoleForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: RoleValues;
  targets: TargetChoices;
  problems?: FieldProblems;
  submit: string;
}) {
  const { values: v, targets, problems: p } = props;
  const Multi = (s: { id: string; name: string; label: string; options: [number, string][]; chosen: number[] }) => (
    <>
      <label for={s.id}>{s.label}</label>
      <select id={s.id} name={s.name} multiple size={Math.min(6, Math.max(2, s.options.length))}>
        {s.options.map(([id, name]) => (
          <option value={String(id)} selected={s.chosen.includes(id)}>
            {name}
          </option>
        ))}
      </select>
    </>
  );
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <Field id="role-name" name="name" label="Name" problems={p} hint="Unique, e.g. ams-operators.">
        <input type="text" id="role-name" name="name" value={v.name} maxlength={64} autocomplete="off" />
      </Field>
      <Field id="role-description" name="description" label="Description" problems={p}>
        <input type="text" id="role-description" name="description" value={v.description} autocomplete="off" />
      </Field>
      <Field
        id="role-permissions"
        name="permissions"
        label="Abilities"
        problems={p}
        hint="What the role's users (and their API tokens) may do. An ability your own role lacks cannot be given."
      >
        <div class="table-wrap" id="role-permissions">
          <AbilityGrid granted={new Set(props.c.var.auth.abilities)} checked={new Set(v.permissions)} />
        </div>
      </Field>
      <Field
        id="role-scope-all"
        name="scope"
        label="Devices"
        problems={p}
        hint="Every device, or only those carrying any of the tags or in any of the categories chosen."
      >
        <label class="check">
          <input type="checkbox" id="role-scope-all" name="all" value="true" checked={v.all} /> Every device
        </label>
        {targets.tags && (
          <Multi id="role-scope-tags" name="tag_ids" label="Tags" options={targets.tags} chosen={v.tags} />
        )}
        {targets.categories && (
          <Multi
            id="role-scope-categories"
            name="category_ids"
            label="Categories"
            options={targets.categories}
            chosen={v.categories}
          />
        )}
      </Field>
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href="/admin/users#roles">Cancel</a>
      </div>
    </CsrfForm>
  );
}

async function formPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  title: string,
  props: Omit<Parameters<typeof RoleForm>[0], "c" | "targets">,
) {
  const targets = await targetChoices(c);
  return renderPage(c, status, {
    title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/admin/users#roles">Roles and scopes</a>
        </p>
        <h1>{title}</h1>
        <RoleForm c={c} targets={targets} {...props} />
      </section>
    ),
  });
}

/**
 * The form as the API's body. The scope is sent only when the page could offer its lists (a role that may not
 * list tags or categories keeps the scope it has when editing; a new role then sees every device, as the API's
 * default), so a form never clears what it did not show.
 */
function inputOf(form: Awaited<ReturnType<typeof readForm>> & object, targets: TargetChoices) {
  const values: RoleValues = {
    name: text(form, "name") ?? "",
    description: text(form, "description") ?? "",
    permissions: texts(form, "abilities"),
    all: text(form, "all") === "true",
    tags: ids(form, "tag_ids"),
    categories: ids(form, "category_ids"),
  };
  const canScope = targets.tags !== null && targets.categories !== null;
  const scope = !canScope
    ? undefined
    : values.all
      ? { all: true }
      : { all: false, tag_ids: values.tags, category_ids: values.categories };
  return {
    values,
    input: { name: values.name, description: values.description, permissions: values.permissions, scope },
  };
}

const showRole = async (c: Context<WebEnv>) =>
  (await rolesResource.show(c.var.services.db, pathId(c.req.param("id")!, "Role"), c.var.auth.scope)) as RoleOut;

const valuesOf = (r: RoleOut): RoleValues => ({
  name: r.name,
  description: r.description,
  permissions: r.permissions,
  all: r.scope.all,
  tags: r.scope.tag_ids,
  categories: r.scope.category_ids,
});

/**
 * Roles through the API's roles resource: create one with its abilities (checkboxes of the catalogue) and the
 * devices it sees, edit it, delete it (refused while users hold it, as the API refuses it). Built-in roles and
 * roles granting more than the caller holds are read-only to them: no button, and the API's 403 if forced.
 */
export function registerRolePages(web: Hono<WebEnv>): void {
  web.get("/admin/roles/new", requirePage("users.write"), (c) =>
    formPage(c, 200, "Add a role", {
      action: "/admin/roles/new",
      values: { name: "", description: "", permissions: [], all: true, tags: [], categories: [] },
      submit: "Add role",
    }),
  );

  web.post("/admin/roles/new", requirePage("users.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { values, input } = inputOf(form, await targetChoices(c));
    try {
      await rolesResource.save(asApi(c), parsedBy(rolesResource.input, input), null, "create");
      return c.redirect("/admin/users?done=role_created#roles", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a role", { action: "/admin/roles/new", values, problems, submit: "Add role" });
    }
  });

  web.get("/admin/roles/:id/edit", requirePage("users.write"), async (c) => {
    const role = await showRole(c);
    return formPage(c, 200, `Edit the role ${role.name}`, {
      action: `/admin/roles/${role.id}/edit`,
      values: valuesOf(role),
      submit: "Save changes",
    });
  });

  web.post("/admin/roles/:id/edit", requirePage("users.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const role = await showRole(c);
    const { values, input } = inputOf(form, await targetChoices(c));
    try {
      await rolesResource.save(asApi(c), parsedBy(rolesResource.input.partial(), input), role.id, "patch");
      return c.redirect("/admin/users?done=role_saved#roles", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, `Edit the role ${role.name}`, {
        action: `/admin/roles/${role.id}/edit`,
        values,
        problems,
        submit: "Save changes",
      });
    }
  });

  const confirmPage = (c: Context<WebEnv>, role: RoleOut, refusal?: ApiError) =>
    renderPage(c, refusal ? (refusal.status as 403 | 409) : 200, {
      title: `Delete ${role.name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete the role ${role.name}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {refusal.message}
            </p>
          )}
          <p>{`Users holding it: ${role.users_count}. A role that users still hold cannot be deleted: give them another role first.`}</p>
          <CsrfForm action={`/admin/roles/${role.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the role
              </button>
              <a href="/admin/users#roles">Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });

  web.get("/admin/roles/:id/delete", requirePage("users.write"), async (c) => confirmPage(c, await showRole(c)));

  web.post("/admin/roles/:id/delete", requirePage("users.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const role = await showRole(c);
    try {
      await rolesResource.remove(asApi(c), [role.id], false);
    } catch (err) {
      // Held by users (409), built-in or beyond the caller (403): said on the confirmation page, nothing deleted.
      if (err instanceof ApiError && (err.status === 409 || err.status === 403)) return confirmPage(c, role, err);
      throw err;
    }
    return c.redirect("/admin/users?done=role_deleted#roles", 303);
  });
}
