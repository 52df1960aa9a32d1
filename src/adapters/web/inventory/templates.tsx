import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { ApiError } from "../../../platform/http/errors.ts";
import { listEnvelope } from "../../../platform/http/list.ts";
import { copyTemplate } from "../../../modules/templates/index.ts";
import { RENDER_MAX_CHARS } from "../../../modules/templates/index.ts";
import { previewTemplate } from "../../../modules/templates/index.ts";
import type { Rendered, RenderedMask } from "../../../modules/templates/index.ts";
import { templatesResource } from "../../../modules/templates/index.ts";
import { plural } from "../../../kernel/words.ts";
import { asApi } from "../api-context.ts";
import type { WebEnv } from "../env.ts";
import { Field, fieldProblems, OtherProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { Time } from "../format.tsx";
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

type Template = {
  id: number;
  name: string;
  description: string;
  code: string;
  builtin: boolean;
  vendor: string | null;
  devices_count: number;
  updated_at: string;
};

const FIELDS = ["name", "description", "code"];

const BULK: BulkDeleteSpec = {
  path: "/templates",
  singular: "template",
  plural: "templates",
  ability: "templates",
  resource: templatesResource as unknown as BulkDeleteSpec["resource"],
  nameOf: (row) => String(row.name),
};

const DONE: Record<string, string> = {
  created: "Template added.",
  saved: "Changes saved.",
  deleted: "Template deleted.",
  copied: "Template copied: this is the copy, yours to change.",
};

const linesOf = (code: string) => {
  const lines = code.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines;
};

/** The line numbers the API's save-time problems name ("code: line 4: key `prompt`: ..."), each with its problems. */
function problemsByLine(problems: FieldProblems | undefined): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const m of problems?.code ?? []) {
    const n = /\bline (\d+)/.exec(m);
    if (n) (out.get(Number(n[1])) ?? out.set(Number(n[1]), []).get(Number(n[1]))!).push(m.replace(/^code: /, ""));
  }
  return out;
}

/** YAML with line numbers; lines a problem names are marked and the problem is said under them. */
function NumberedCode(props: { code: string; problems?: Map<number, string[]>; id: string }) {
  return (
    <pre class="config numbered" id={props.id}>
      {linesOf(props.code).map((line, i) => {
        const here = props.problems?.get(i + 1);
        return (
          <>
            <span class={`line${here ? " hit" : ""}`} id={`${props.id}-L${i + 1}`} data-n={String(i + 1)}>
              {line}
            </span>
            {here?.map((m) => (
              <span class="line line-problem" role="alert" data-n="">
                {`↑ ${m}`}
              </span>
            ))}
          </>
        );
      })}
    </pre>
  );
}

/** One rendered line with its masked spans marked (columns are 1-based characters of the rendered text). */
function MaskedLine(props: { line: string; masks: RenderedMask[] }) {
  const parts: Child[] = [];
  let at = 0;
  for (const m of [...props.masks].sort((a, b) => a.column - b.column)) {
    const start = m.column - 1;
    if (start < at) continue;
    parts.push(props.line.slice(at, start));
    parts.push(
      <mark title={`${m.layer === "template" ? "template rule" : "generic layer"} ${m.rule}`}>
        {props.line.slice(start, start + m.length)}
      </mark>,
    );
    at = start + m.length;
  }
  parts.push(props.line.slice(at));
  return <>{parts}</>;
}

function RenderedText(props: { rendered: Rendered }) {
  const { rendered } = props;
  const byLine = new Map<number, RenderedMask[]>();
  for (const m of rendered.masks) (byLine.get(m.line) ?? byLine.set(m.line, []).get(m.line)!).push(m);
  return (
    <div id="render-result">
      <h3>What netkeep would store</h3>
      <p>
        {`${plural(rendered.masks.length, "value")} masked, ${plural(rendered.lines_dropped, "line")} dropped by the template's filters.`}
      </p>
      <pre class="config numbered">
        {linesOf(rendered.text).map((line, i) => (
          <span class="line" data-n={String(i + 1)}>
            <MaskedLine line={line} masks={byLine.get(i + 1) ?? []} />
          </span>
        ))}
      </pre>
      {rendered.masks.length > 0 && (
        <div class="table-wrap">
          <table id="render-masks">
            <thead>
              <tr>
                <th>Line</th>
                <th>Masked by</th>
                <th>Rule</th>
              </tr>
            </thead>
            <tbody>
              {rendered.masks.map((m) => (
                <tr>
                  <td>{String(m.line)}</td>
                  <td>{m.layer === "template" ? "the template" : "netkeep's generic layer"}</td>
                  <td class="mono">
                    {m.rule}
                    {m.pattern && <div class="muted">{m.pattern}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function TemplateForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: Record<string, string>;
  problems?: FieldProblems;
  submit: string;
  cancel: string;
}) {
  const { values: v, problems: p } = props;
  const lines = problemsByLine(p);
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <Field id="t-name" name="name" label="Name" problems={p} hint="Unique, e.g. cisco-ios-lab.">
        <input type="text" id="t-name" name="name" value={v.name ?? ""} autocomplete="off" />
      </Field>
      <Field
        id="t-description"
        name="description"
        label="Description"
        problems={p}
        hint="Left empty on a new template: the YAML's description."
      >
        <input type="text" id="t-description" name="description" value={v.description ?? ""} autocomplete="off" />
      </Field>
      <Field
        id="t-code"
        name="code"
        label="YAML"
        problems={p}
        hint="The format: docs/collector.md, Connection templates."
      >
        <textarea id="t-code" name="code" rows={22} class="code" spellcheck={false}>
          {v.code ?? ""}
        </textarea>
      </Field>
      {lines.size > 0 && (
        <div id="code-problems">
          <h3>Where the problems are</h3>
          <NumberedCode code={v.code ?? ""} problems={lines} id="checked" />
        </div>
      )}
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href={props.cancel}>Cancel</a>
      </div>
    </CsrfForm>
  );
}

/**
 * Connection templates through the API's templates resource: list, view (YAML with line numbers), copy, add,
 * edit (save-time problems shown on their lines), delete, and the render preview of a pasted configuration
 * (POST /templates/{id}/render's service: what would be stored, every masked span and its rule).
 */
export function registerTemplatePages(web: Hono<WebEnv>): void {
  registerBulkDelete(web, BULK);
  web.get("/templates", requirePage("templates.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, templatesResource.listSpec);
    const { total, rows } = await templatesResource.list(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const canWrite = c.var.auth.abilities.has("templates.write");
    const done = DONE[c.req.query("done") ?? ""] ?? bulkDeletedMessage(c, BULK);
    return renderPage(c, 200, {
      title: "Templates",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Templates</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p class="muted">
            How the collector talks to each kind of device: prompts, paging, commands, filters and secret masking.
            Built-in templates are read-only: copy one to change it.
          </p>
          <form method="get" action="/templates" class="filters">
            <div class="field grow">
              <label for="t-search">Search</label>
              <input type="search" id="t-search" name="search" value={c.req.query("search") ?? ""} />
            </div>
            <button type="submit" class="secondary">
              Search
            </button>
            {canWrite && (
              <a class="button" href="/templates/new">
                Add a template
              </a>
            )}
          </form>
          <Pager c={c} meta={meta} noun="templates" />
          <BulkDeleteForm c={c} spec={BULK}>
            <div class="table-wrap">
              <table id="template-list">
                <thead>
                  <tr>
                    {canWrite && (
                      <th>
                        <span class="visually-hidden">Select</span>
                      </th>
                    )}
                    <th>Name</th>
                    <th>Vendor</th>
                    <th>Used by</th>
                    <th>
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {(rows as Template[]).map((r) => (
                    <tr data-id={String(r.id)}>
                      {canWrite && <td>{!r.builtin && <SelectBox id={r.id} name={r.name} />}</td>}
                      <td>
                        <a href={`/templates/${r.id}`}>
                          <strong>{r.name}</strong>
                        </a>{" "}
                        {r.builtin && <span class="badge">built-in</span>}
                        <div class="muted">{r.description}</div>
                      </td>
                      <td>{r.vendor ?? <span class="muted">none</span>}</td>
                      <td>{plural(r.devices_count, "device")}</td>
                      <td>
                        <a href={`/templates/${r.id}`}>View</a>
                        {canWrite && !r.builtin && (
                          <>
                            {" "}
                            <a href={`/templates/${r.id}/edit`}>Edit</a>{" "}
                            <a href={`/templates/${r.id}/delete`}>Delete</a>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </BulkDeleteForm>
        </section>
      ),
    });
  });

  const formPage = (
    c: Context<WebEnv>,
    status: 200 | 422,
    title: string,
    props: Omit<Parameters<typeof TemplateForm>[0], "c">,
  ) =>
    renderPage(c, status, {
      title,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/templates">Templates</a>
          </p>
          <h1>{title}</h1>
          <TemplateForm c={c} {...props} />
        </section>
      ),
    });

  const valuesOf = (form: Record<string, unknown>) => ({
    name: text(form as never, "name") ?? "",
    description: text(form as never, "description") ?? "",
    code: (text(form as never, "code") ?? "").replace(/\r\n?/g, "\n"),
  });

  web.get("/templates/new", requirePage("templates.write"), (c) =>
    formPage(c, 200, "Add a template", {
      action: "/templates/new",
      values: {
        code: "vendor: Example\ndescription: Example devices\nprompt: '[#>] ?$'\ncommands:\n  - show running-config\n",
      },
      submit: "Add template",
      cancel: "/templates",
    }),
  );

  web.post("/templates/new", requirePage("templates.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = valuesOf(form);
    const input = {
      name: values.name,
      code: values.code,
      ...(values.description ? { description: values.description } : {}),
    };
    try {
      const saved = await templatesResource.save(asApi(c), parsedBy(templatesResource.input, input), null, "create");
      return c.redirect(`/templates/${saved.id}?done=created`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a template", {
        action: "/templates/new",
        values,
        problems,
        submit: "Add template",
        cancel: "/templates",
      });
    }
  });

  const existing = async (c: Context<WebEnv>) =>
    (await templatesResource.show(
      c.var.services.db,
      pathId(c.req.param("id")!, "Template"),
      c.var.auth.scope,
    )) as unknown as Template;

  const viewPage = (
    c: Context<WebEnv>,
    t: Template,
    extra: {
      status?: 200 | 422;
      copyProblems?: FieldProblems;
      copyName?: string;
      pasted?: string;
      rendered?: Rendered;
      renderProblems?: FieldProblems;
    } = {},
  ) => {
    const canWrite = c.var.auth.abilities.has("templates.write");
    const done = DONE[c.req.query("done") ?? ""];
    return renderPage(c, extra.status ?? 200, {
      title: t.name,
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <p class="muted">
              <a href="/templates">Templates</a>
            </p>
            <h1>
              {t.name} {t.builtin && <span class="badge">built-in</span>}
            </h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <dl class="details">
              <dt>Description</dt>
              <dd>{t.description || <span class="muted">none</span>}</dd>
              <dt>Vendor</dt>
              <dd>{t.vendor ?? <span class="muted">none</span>}</dd>
              <dt>Used by</dt>
              <dd>{plural(t.devices_count, "device")}</dd>
              <dt>Changed</dt>
              <dd>
                <Time at={new Date(t.updated_at)} none="" />
              </dd>
            </dl>
            {canWrite && (
              <div class="actions">
                {!t.builtin && (
                  <>
                    <a class="button" href={`/templates/${t.id}/edit`}>
                      Edit
                    </a>
                    <a class="button secondary" href={`/templates/${t.id}/delete`}>
                      Delete
                    </a>
                  </>
                )}
              </div>
            )}
            {canWrite && (
              <CsrfForm action={`/templates/${t.id}/copy`} csrf={c.var.session.csrfToken} class="row-form copy-form">
                <Field
                  id="copy-name"
                  name="name"
                  label="Copy as"
                  problems={extra.copyProblems}
                  hint={`Empty: "${t.name} (copy)".`}
                >
                  <input type="text" id="copy-name" name="name" value={extra.copyName ?? ""} autocomplete="off" />
                </Field>
                <button type="submit" class="secondary">
                  Copy the template
                </button>
              </CsrfForm>
            )}
          </section>
          <section class="card" id="render">
            <h2>Try it on a configuration</h2>
            <p class="muted">
              Paste a command's output as the device prints it: the page shows what a backup would store under this
              template (drop filters applied, secrets masked by the template and by netkeep's generic layer). Nothing is
              stored.
            </p>
            <CsrfForm action={`/templates/${t.id}/render#render`} csrf={c.var.session.csrfToken}>
              <Field id="render-text" name="text" label="Configuration" problems={extra.renderProblems}>
                <textarea id="render-text" name="text" rows={10} class="code" spellcheck={false}>
                  {extra.pasted ?? ""}
                </textarea>
              </Field>
              <div class="actions">
                <button type="submit">Show what would be stored</button>
              </div>
            </CsrfForm>
            {extra.rendered && <RenderedText rendered={extra.rendered} />}
          </section>
          <section class="card">
            <h2>YAML</h2>
            <NumberedCode code={t.code} id="template-code" />
          </section>
        </>
      ),
    });
  };

  web.get("/templates/:id", requirePage("templates.read"), async (c) => viewPage(c, await existing(c)));

  web.post("/templates/:id/render", requirePage("templates.read"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const t = await existing(c);
    const pasted = text(form, "text") ?? "";
    if (pasted.length > RENDER_MAX_CHARS)
      return viewPage(c, t, {
        status: 422,
        renderProblems: { text: [`must be at most ${RENDER_MAX_CHARS} characters`] },
      });
    return viewPage(c, t, { pasted, rendered: await previewTemplate(c.var.services.db, t.id, pasted) });
  });

  web.post("/templates/:id/copy", requirePage("templates.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const t = await existing(c);
    const name = (text(form, "name") ?? "").trim();
    try {
      const actor = { db: c.var.services.db, auth: c.var.auth, now: c.var.services.clock.now() };
      const copy = await copyTemplate(actor, t.id, name || undefined);
      return c.redirect(`/templates/${copy.id}?done=copied`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return viewPage(c, t, { status: 422, copyProblems: problems, copyName: name });
    }
  });

  web.get("/templates/:id/edit", requirePage("templates.write"), async (c) => {
    const t = await existing(c);
    return formPage(c, 200, `Edit ${t.name}`, {
      action: `/templates/${t.id}/edit`,
      values: { name: t.name, description: t.description, code: t.code },
      submit: "Save changes",
      cancel: `/templates/${t.id}`,
    });
  });

  web.post("/templates/:id/edit", requirePage("templates.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const t = await existing(c);
    const values = valuesOf(form);
    try {
      await templatesResource.save(asApi(c), parsedBy(templatesResource.input.partial(), values), t.id, "patch");
      return c.redirect(`/templates/${t.id}?done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, `Edit ${t.name}`, {
        action: `/templates/${t.id}/edit`,
        values,
        problems,
        submit: "Save changes",
        cancel: `/templates/${t.id}`,
      });
    }
  });

  const confirmPage = (c: Context<WebEnv>, t: Template, refusal?: string) =>
    renderPage(c, refusal ? 409 : 200, {
      title: `Delete ${t.name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete the template ${t.name}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {refusal}
            </p>
          )}
          <p>{`Devices of yours using it: ${t.devices_count}. A template that devices still use cannot be deleted: give them another template first.`}</p>
          <CsrfForm action={`/templates/${t.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the template
              </button>
              <a href={`/templates/${t.id}`}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });

  web.get("/templates/:id/delete", requirePage("templates.write"), async (c) => confirmPage(c, await existing(c)));

  web.post("/templates/:id/delete", requirePage("templates.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const t = await existing(c);
    try {
      await templatesResource.remove(asApi(c), [t.id], false);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return confirmPage(c, t, err.message);
      throw err;
    }
    return c.redirect("/templates?done=deleted", 303);
  });
}
