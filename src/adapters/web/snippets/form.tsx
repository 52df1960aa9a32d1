import type { Context, Hono } from "hono";
import { snippetsResource } from "../../../modules/snippets/index.ts";
import { templatesResource } from "../../../modules/templates/index.ts";
import { choices } from "../choices.ts";
import { asApi } from "../api-context.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  OtherProblems,
  parsedBy,
  readForm,
  ids,
  text,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

const FIELDS = ["name", "description", "content", "rollback_content", "tags"];

type Values = {
  name?: string;
  description?: string;
  content?: string;
  rollback_content?: string;
  tags?: string;
  template_ids?: string[];
};
type TemplateChoices = [number, string][] | null;

/** The templates the form offers; null when the role may not list them (the snippet then keeps its own). */
const templateChoices = (c: Context<WebEnv>) => choices(c, templatesResource, "templates.read", "name");

/** The form as the snippets API's body; tags comma-separated; the template ids when the form offered them. */
function inputOf(form: Form, templates: TemplateChoices) {
  const values: Values & Record<string, string> = Object.fromEntries(FIELDS.map((f) => [f, text(form, f) ?? ""]));
  const templateIds = ids(form, "template_ids");
  if (templates) values.template_ids = templateIds.map(String);
  return {
    values,
    input: {
      ...(templates ? { template_ids: templateIds } : {}),
      name: values.name,
      description: values.description,
      content: values.content,
      rollback_content: values.rollback_content,
      tags: values
        .tags!.split(",")
        .map((t) => t.trim())
        .filter(Boolean),
    },
  };
}

function SnippetForm(props: {
  c: Context<WebEnv>;
  action: string;
  templates: TemplateChoices;
  values: Values;
  problems?: FieldProblems;
  submit: string;
  cancel: string;
}) {
  const { values: v, problems: p } = props;
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <div class="grid-form">
        <Field id="s-name" name="name" label="Name" problems={p}>
          <input type="text" id="s-name" name="name" value={v.name ?? ""} />
        </Field>
        <Field id="s-description" name="description" label="Description" problems={p}>
          <input type="text" id="s-description" name="description" value={v.description ?? ""} />
        </Field>
        <Field id="s-tags" name="tags" label="Tags" problems={p} hint="Comma-separated.">
          <input type="text" id="s-tags" name="tags" value={v.tags ?? ""} />
        </Field>
        {props.templates && (
          <Field
            id="s-template_ids"
            name="template_ids"
            label="Written for templates"
            problems={p}
            hint="The connection templates (device families) whose syntax the lines use; none chosen: any."
          >
            <select id="s-template_ids" name="template_ids" multiple size={6}>
              {props.templates.map(([id, name]) => (
                <option value={String(id)} selected={(v.template_ids ?? []).includes(String(id))}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
        )}
      </div>
      <Field
        id="s-content"
        name="content"
        label="Lines"
        problems={p}
        hint="One configuration line per line; {name} is a variable, given at deploy time or taken from the device ({device_name}, {device_ip}, a custom attribute)."
      >
        <textarea id="s-content" name="content" class="code" rows={10} spellcheck={false}>
          {v.content ?? ""}
        </textarea>
      </Field>
      <Field
        id="s-rollback_content"
        name="rollback_content"
        label="Rollback lines"
        problems={p}
        hint="Pushed when a push of the lines fails (empty: none)."
      >
        <textarea id="s-rollback_content" name="rollback_content" class="code" rows={4} spellcheck={false}>
          {v.rollback_content ?? ""}
        </textarea>
      </Field>
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href={props.cancel}>Cancel</a>
      </div>
    </CsrfForm>
  );
}

function formPage(c: Context<WebEnv>, status: 200 | 422, title: string, props: Parameters<typeof SnippetForm>[0]) {
  return renderPage(c, status, {
    title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/snippets">Snippets</a>
        </p>
        <h1>{title}</h1>
        <SnippetForm {...props} />
      </section>
    ),
  });
}

/** Add, edit and delete snippets through the API's snippets resource (its checks, its activity log entries). */
export function registerSnippetForms(web: Hono<WebEnv>): void {
  const write = requirePage("snippets.write");

  web.get("/snippets/new", write, async (c) =>
    formPage(c, 200, "Add a snippet", {
      c,
      templates: await templateChoices(c),
      action: "/snippets/new",
      values: {},
      submit: "Add snippet",
      cancel: "/snippets",
    }),
  );

  web.post("/snippets/new", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const templates = await templateChoices(c);
    const { input, values } = inputOf(form, templates);
    try {
      const saved = await snippetsResource.save(asApi(c), parsedBy(snippetsResource.input, input), null, "create");
      return c.redirect(`/snippets/${saved.id}?done=created`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a snippet", {
        c,
        templates,
        action: "/snippets/new",
        values,
        problems,
        submit: "Add snippet",
        cancel: "/snippets",
      });
    }
  });

  const snippetOf = (c: Context<WebEnv>) =>
    snippetsResource.show(c.var.services.db, pathId(c.req.param("id")!, "Snippet"), c.var.auth.scope);

  web.get("/snippets/:id/edit", write, async (c) => {
    const s = await snippetOf(c);
    const values = {
      name: String(s.name),
      description: String(s.description),
      content: String(s.content),
      rollback_content: String(s.rollback_content),
      tags: (s.tags as string[]).join(", "),
      template_ids: (s.template_ids as number[]).map(String),
    };
    return formPage(c, 200, `Edit ${s.name}`, {
      c,
      templates: await templateChoices(c),
      action: `/snippets/${s.id}/edit`,
      values,
      submit: "Save changes",
      cancel: `/snippets/${s.id}`,
    });
  });

  web.post("/snippets/:id/edit", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const s = await snippetOf(c);
    const templates = await templateChoices(c);
    const { input, values } = inputOf(form, templates);
    try {
      await snippetsResource.save(asApi(c), parsedBy(snippetsResource.input.partial(), input), s.id, "patch");
      return c.redirect(`/snippets/${s.id}?done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, `Edit ${s.name}`, {
        c,
        templates,
        action: `/snippets/${s.id}/edit`,
        values,
        problems,
        submit: "Save changes",
        cancel: `/snippets/${s.id}`,
      });
    }
  });

  web.post("/snippets/:id/delete", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await snippetsResource.remove(asApi(c), [pathId(c.req.param("id")!, "Snippet")], false);
    return c.redirect("/snippets?done=deleted", 303);
  });
}
