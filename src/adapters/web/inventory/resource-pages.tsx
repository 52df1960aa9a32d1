import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { z } from "zod";
import type { Resource } from "../../../platform/auth/abilities.ts";
import type { DeviceScope } from "../../../platform/auth/scope.ts";
import type { DbOrTx } from "../../../db/client.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { listEnvelope, type ListQuery, type ListSpec } from "../../../platform/http/list.ts";
import { asApi } from "../api-context.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  ids,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { Pager, pageListQuery, withoutEmptyFields } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import {
  BulkDeleteForm,
  bulkDeletedMessage,
  registerBulkDelete,
  SelectBox,
  type BulkDeleteSpec,
} from "./bulk-delete.tsx";

export type Row = { id: number } & Record<string, unknown>;
export type Choices = [number, string][];

/** What a declared resource (platform/http/resource.ts defineResource) offers pages: the API's own reads and writes. */
export type PageResource = {
  listSpec: ListSpec;
  input: z.ZodObject;
  list(db: DbOrTx, scope: DeviceScope, q: ListQuery): Promise<{ total: number; rows: Row[] }>;
  show(db: DbOrTx, id: number, scope: DeviceScope): Promise<Row>;
  /** `input` is each resource's own type, checked by its schema (parsedBy) before the call. */
  save(c: Context<AppEnv>, input: any, id: number | null, mode: "create" | "patch"): Promise<Row>;
  remove(c: Context<AppEnv>, ids: number[], bulk: boolean): Promise<{ count: number; note: string }>;
  previewRemove(c: Context<AppEnv>, ids: number[]): Promise<Map<number, { refusal: string } | { note: string }>>;
};

/**
 * A form control and how its value becomes the API body's field:
 * text/textarea/color as typed; number (empty: null); select of ids (empty: null); checkboxes of ids; a
 * comma-separated list of names.
 */
export type FieldSpec = {
  name: string;
  label: string;
  hint?: string;
  kind: "text" | "textarea" | "color" | "number" | "select" | "checkboxes" | "names" | "boolean";
  /** A text field left empty is sent as null (the API's "none", e.g. every command). */
  emptyIsNull?: boolean;
  /** The records a select or checkboxes offer (null: the role may not list them; the field is left out). */
  options?: (c: Context<WebEnv>) => Promise<Choices | null>;
};

export type Column = { label: string; cell: (row: Row) => Child };

export type ResourcePagesSpec = {
  /** The pages' path, e.g. "/vendors". */
  path: string;
  /** "Vendors", "vendor", "vendors": headings and messages. */
  title: string;
  singular: string;
  plural: string;
  ability: Resource;
  resource: PageResource;
  /** The row's field that names it. */
  nameField: string;
  intro: Child;
  empty: string;
  fields: FieldSpec[];
  columns: Column[];
  /** What deleting does or why it may be refused, said on the confirmation page. */
  deleteNote: (row: Row) => string;
  /** Extra links on each row (e.g. a command group's commands). */
  rowLinks?: (row: Row) => Child;
  /** Values of a new record's form taken from the address (e.g. the command group a command is added to). */
  newValues?: (c: Context<WebEnv>) => Record<string, string | string[]>;
  /** What the list's rows carry besides the API's answer (e.g. a zone's collectors), for the columns. */
  enrich?: (c: Context<WebEnv>, rows: Row[]) => Promise<Row[]>;
  /**
   * Records that reach every device (the API refuses their writes to a role that sees only some devices): the
   * write controls are shown only to a role that sees every device.
   */
  wholeEstateWrites?: boolean;
  /** Tick boxes on the list and **Delete selected** (the API's bulk delete, after a confirmation page). */
  bulkDelete?: boolean;
  /** A page to answer a create with instead of the list (e.g. a key shown once); undefined: the list. */
  created?: (c: Context<WebEnv>, saved: Row) => Response | Promise<Response> | undefined;
};

type Values = Record<string, string | string[]>;

/** The list inside the bulk form when the page offers the bulk delete, as it is otherwise. */
const Selectable = (props: { bulk?: BulkDeleteSpec; c: Context<WebEnv>; children: Child }) =>
  props.bulk ? (
    <BulkDeleteForm c={props.c} spec={props.bulk}>
      {props.children}
    </BulkDeleteForm>
  ) : (
    <>{props.children}</>
  );

const idOf = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);

/** The API body from the form; `values` is what to show again when it is refused. */
function inputOf(
  fields: FieldSpec[],
  form: Form,
  offered: Set<string>,
): { input: Record<string, unknown>; values: Values } {
  const input: Record<string, unknown> = {};
  const values: Values = {};
  for (const f of fields) {
    if (!offered.has(f.name)) continue;
    if (f.kind === "checkboxes") {
      const chosen = ids(form, f.name);
      values[f.name] = chosen.map(String);
      input[f.name] = chosen;
      continue;
    }
    const v = text(form, f.name) ?? "";
    if (f.kind === "boolean") {
      values[f.name] = v === "true" ? "true" : "false";
      input[f.name] = v === "true";
      continue;
    }
    values[f.name] = v;
    if (f.emptyIsNull && v.trim() === "") input[f.name] = null;
    else if (f.kind === "number" || f.kind === "select") input[f.name] = v.trim() === "" ? null : idOf(v.trim());
    else if (f.kind === "names")
      input[f.name] = v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    else input[f.name] = v;
  }
  return { input, values };
}

/** A stored record as the form's values. */
function valuesOf(fields: FieldSpec[], row: Row): Values {
  const out: Values = {};
  for (const f of fields) {
    const v = row[f.name];
    if (f.kind === "checkboxes") out[f.name] = Array.isArray(v) ? v.map(String) : [];
    else if (f.kind === "names") out[f.name] = Array.isArray(v) ? v.join(", ") : "";
    else out[f.name] = v == null ? "" : String(v);
  }
  return out;
}

/**
 * List, add, edit and delete pages for a declared resource: every read and write goes through the API's
 * resource (the same schema, scope checks, refusals and activity entries); controls the role may not use are
 * absent.
 */
export function registerResourcePages(web: Hono<WebEnv>, spec: ResourcePagesSpec): void {
  const { path, resource } = spec;
  const read = `${spec.ability}.read` as const;
  const write = `${spec.ability}.write` as const;
  const fieldNames = spec.fields.map((f) => f.name);
  const prefix = spec.path.slice(1).replace(/\W/g, "-");
  const nameOf = (row: Row) => String(row[spec.nameField]);
  const writable = (c: Context<WebEnv>) =>
    c.var.auth.abilities.has(write) && (!spec.wholeEstateWrites || c.var.auth.scope.all);
  /** The write pages: the ability, and for records reaching every device a role that sees every device (as the API). */
  const writePage = [
    requirePage(write),
    async (c: Context<WebEnv>, next: () => Promise<void>) => {
      if (!writable(c))
        throw new ApiError(
          403,
          `Changing ${spec.plural} needs a role that sees every device: they apply to all of them`,
        );
      await next();
    },
  ] as const;
  const bulk: BulkDeleteSpec | undefined = spec.bulkDelete
    ? {
        path,
        singular: spec.singular,
        plural: spec.plural,
        ability: spec.ability,
        resource,
        nameOf,
      }
    : undefined;
  if (bulk) registerBulkDelete(web, bulk);

  const optionsFor = async (c: Context<WebEnv>) => {
    const out = new Map<string, Choices | null>();
    for (const f of spec.fields) if (f.options) out.set(f.name, await f.options(c));
    return out;
  };
  /** Fields the form shows: a list the role may not read is left out, and the record keeps what it has. */
  const offeredOf = (options: Map<string, Choices | null>) =>
    new Set(spec.fields.filter((f) => !f.options || options.get(f.name) !== null).map((f) => f.name));

  function EntityForm(props: {
    c: Context<WebEnv>;
    action: string;
    values: Values;
    options: Map<string, Choices | null>;
    problems?: FieldProblems;
    submit: string;
  }) {
    const { values: v, problems: p } = props;
    const offered = offeredOf(props.options);
    return (
      <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="grid-form entity-form">
        <OtherProblems problems={p} fields={fieldNames} />
        {spec.fields
          .filter((f) => offered.has(f.name))
          .map((f) => {
            const id = `${prefix}-${f.name}`;
            const value = v[f.name];
            const one = typeof value === "string" ? value : "";
            const control =
              f.kind === "textarea" ? (
                <textarea id={id} name={f.name} rows={3}>
                  {one}
                </textarea>
              ) : f.kind === "select" ? (
                <select id={id} name={f.name}>
                  <option value="">None</option>
                  {(props.options.get(f.name) ?? []).map(([oid, label]) => (
                    <option value={String(oid)} selected={one === String(oid)}>
                      {label}
                    </option>
                  ))}
                </select>
              ) : f.kind === "boolean" ? (
                <label class="check">
                  <input type="checkbox" id={id} name={f.name} value="true" checked={one === "true"} /> yes
                </label>
              ) : f.kind === "checkboxes" ? (
                <fieldset class="checks" id={id}>
                  {(props.options.get(f.name) ?? []).map(([oid, label]) => (
                    <label class="check">
                      <input
                        type="checkbox"
                        name={f.name}
                        value={String(oid)}
                        checked={Array.isArray(value) && value.includes(String(oid))}
                      />{" "}
                      {label}
                    </label>
                  ))}
                </fieldset>
              ) : (
                <input
                  type={f.kind === "color" ? "color" : f.kind === "number" ? "number" : "text"}
                  id={id}
                  name={f.name}
                  value={f.kind === "color" && !one ? "#6b7280" : one}
                  autocomplete="off"
                />
              );
            return (
              <Field id={id} name={f.name} label={f.label} problems={p} hint={f.hint}>
                {control}
              </Field>
            );
          })}
        <div class="actions">
          <button type="submit">{props.submit}</button>
          <a href={path}>Cancel</a>
        </div>
      </CsrfForm>
    );
  }

  const formPage = async (
    c: Context<WebEnv>,
    status: 200 | 422,
    title: string,
    props: { action: string; values: Values; problems?: FieldProblems; submit: string },
    options?: Map<string, Choices | null>,
  ) =>
    renderPage(c, status, {
      title,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href={path}>{spec.title}</a>
          </p>
          <h1>{title}</h1>
          <EntityForm c={c} {...props} options={options ?? (await optionsFor(c))} />
        </section>
      ),
    });

  const done: Record<string, string> = {
    created: `${spec.singular.charAt(0).toUpperCase()}${spec.singular.slice(1)} added.`,
    saved: "Changes saved.",
    deleted: `${spec.singular.charAt(0).toUpperCase()}${spec.singular.slice(1)} deleted.`,
  };

  web.get(path, requirePage(read), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, resource.listSpec);
    const listed = await resource.list(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, listed.total, listed.rows);
    const rows = spec.enrich ? await spec.enrich(c, listed.rows) : listed.rows;
    const canWrite = writable(c);
    const flash = done[c.req.query("done") ?? ""] ?? (bulk && bulkDeletedMessage(c, bulk));
    const selectable = bulk !== undefined && canWrite;
    const search = c.req.query("search") ?? "";
    return renderPage(c, 200, {
      title: spec.title,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{spec.title}</h1>
          {flash && (
            <p class="alert success" role="status">
              {flash}
            </p>
          )}
          <p class="muted">{spec.intro}</p>
          <form method="get" action={path} class="filters">
            <div class="field grow">
              <label for={`${prefix}-search`}>Search</label>
              <input type="search" id={`${prefix}-search`} name="search" value={search} />
            </div>
            <button type="submit" class="secondary">
              Search
            </button>
            {canWrite && (
              <a class="button" href={`${path}/new${new URL(c.req.url).search}`}>
                {`Add a ${spec.singular}`}
              </a>
            )}
          </form>
          <Pager c={c} meta={meta} noun={spec.plural} />
          {rows.length ? (
            <Selectable bulk={selectable ? bulk : undefined} c={c}>
              <div class="table-wrap">
                <table id={`${prefix}-list`}>
                  <thead>
                    <tr>
                      {selectable && (
                        <th>
                          <span class="visually-hidden">Select</span>
                        </th>
                      )}
                      {spec.columns.map((col) => (
                        <th>{col.label}</th>
                      ))}
                      {(canWrite || spec.rowLinks) && (
                        <th>
                          <span class="visually-hidden">Actions</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((r) => (
                      <tr data-id={String(r.id)}>
                        {selectable && (
                          <td>
                            <SelectBox id={r.id} name={nameOf(r)} />
                          </td>
                        )}
                        {spec.columns.map((col) => (
                          <td>{col.cell(r)}</td>
                        ))}
                        {(canWrite || spec.rowLinks) && (
                          <td>
                            {spec.rowLinks?.(r)}{" "}
                            {canWrite && (
                              <>
                                <a href={`${path}/${r.id}/edit`}>Edit</a> <a href={`${path}/${r.id}/delete`}>Delete</a>
                              </>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </Selectable>
          ) : (
            <p class="muted">{spec.empty}</p>
          )}
        </section>
      ),
    });
  });

  const newTitle = `Add a ${spec.singular}`;
  web.get(`${path}/new`, ...writePage, (c) =>
    formPage(c, 200, newTitle, {
      action: `${path}/new`,
      values: spec.newValues?.(c) ?? {},
      submit: `Add ${spec.singular}`,
    }),
  );

  web.post(`${path}/new`, ...writePage, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const options = await optionsFor(c);
    const { input, values } = inputOf(spec.fields, form, offeredOf(options));
    try {
      const saved = await resource.save(asApi(c), parsedBy(resource.input, input), null, "create");
      return (await spec.created?.(c, saved)) ?? c.redirect(`${path}?done=created`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(
        c,
        422,
        newTitle,
        { action: `${path}/new`, values, problems, submit: `Add ${spec.singular}` },
        options,
      );
    }
  });

  const existing = (c: Context<WebEnv>) =>
    resource.show(c.var.services.db, pathId(c.req.param("id")!, spec.singular), c.var.auth.scope);

  web.get(`${path}/:id/edit`, ...writePage, async (c) => {
    const row = await existing(c);
    return formPage(c, 200, `Edit ${nameOf(row)}`, {
      action: `${path}/${row.id}/edit`,
      values: valuesOf(spec.fields, row),
      submit: "Save changes",
    });
  });

  web.post(`${path}/:id/edit`, ...writePage, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const row = await existing(c);
    const options = await optionsFor(c);
    const { input, values } = inputOf(spec.fields, form, offeredOf(options));
    try {
      await resource.save(asApi(c), parsedBy(resource.input.partial(), input), row.id, "patch");
      return c.redirect(`${path}?done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(
        c,
        422,
        `Edit ${nameOf(row)}`,
        { action: `${path}/${row.id}/edit`, values, problems, submit: "Save changes" },
        options,
      );
    }
  });

  const confirmPage = (c: Context<WebEnv>, row: Row, refusal?: string) =>
    renderPage(c, refusal ? 409 : 200, {
      title: `Delete ${nameOf(row)}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete the ${spec.singular} ${nameOf(row)}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {refusal}
            </p>
          )}
          <p>{spec.deleteNote(row)}</p>
          <CsrfForm action={`${path}/${row.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                {`Delete the ${spec.singular}`}
              </button>
              <a href={path}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });

  web.get(`${path}/:id/delete`, ...writePage, async (c) => confirmPage(c, await existing(c)));

  web.post(`${path}/:id/delete`, ...writePage, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const row = await existing(c);
    try {
      await resource.remove(asApi(c), [row.id], false);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return confirmPage(c, row, err.message);
      throw err;
    }
    return c.redirect(`${path}?done=deleted`, 303);
  });
}
