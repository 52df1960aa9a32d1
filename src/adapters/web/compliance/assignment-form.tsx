import type { Context } from "hono";
import { ASSIGNMENT_SCOPES } from "../../../modules/compliance/index.ts";
import { plural } from "../../../kernel/words.ts";
import { targetChoices, type TargetChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { Field, OtherProblems, type FieldProblems, type Form, ids, text } from "../form.tsx";
import { policiesResource } from "../../../modules/compliance/index.ts";
import { CsrfForm, renderPage } from "../layout.tsx";

export const assignmentChoices = targetChoices;

const SCOPE_LABELS: Record<(typeof ASSIGNMENT_SCOPES)[number], string> = {
  all: "every device",
  tags: "devices with any of these tags",
  categories: "devices in any of these categories",
  devices: "these devices (ids)",
};

const FIELDS = [
  "policy_id",
  "scope",
  "tags",
  "categories",
  "devices",
  "command",
  "description",
  "enabled",
  "run_on_backup",
];

/** The form as the assignments API's body: ids from the selects, device ids from a comma-separated field. */
export function assignmentInput(form: Form) {
  const scope = text(form, "scope") ?? "";
  const deviceText = text(form, "devices") ?? "";
  const deviceIds = deviceText
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((v) => (/^\d+$/.test(v) ? Number(v) : Number.NaN));
  const command = (text(form, "command") ?? "").trim();
  return {
    input: {
      policy_id: Number(text(form, "policy_id")),
      description: text(form, "description") ?? "",
      scope,
      ...(scope === "tags" ? { tags: ids(form, "tags") } : {}),
      ...(scope === "categories" ? { categories: ids(form, "categories") } : {}),
      ...(scope === "devices" ? { devices: deviceIds } : {}),
      command: command === "" ? null : command,
      enabled: text(form, "enabled") === "true",
      run_on_backup: text(form, "run_on_backup") === "true",
    },
    values: {
      policy_id: text(form, "policy_id") ?? "",
      scope,
      devices: deviceText,
      command,
      description: text(form, "description") ?? "",
      tags: ids(form, "tags").map(String),
      categories: ids(form, "categories").map(String),
      enabled: text(form, "enabled") ?? "false",
      run_on_backup: text(form, "run_on_backup") ?? "false",
    },
  };
}

/** A stored assignment (as the API shows it to this caller) as the form's values. */
export function assignmentValues(a: Record<string, unknown>): Values {
  const list = (field: string) => ((a[field] as number[] | undefined) ?? []).map(String);
  return {
    policy_id: String(a.policy_id),
    scope: String(a.scope),
    devices: list("devices").join(", "),
    command: a.command == null ? "" : String(a.command),
    description: String(a.description ?? ""),
    tags: list("tags"),
    categories: list("categories"),
    enabled: a.enabled ? "true" : "false",
    run_on_backup: a.run_on_backup ? "true" : "false",
  };
}

type Values = Partial<ReturnType<typeof assignmentInput>["values"]>;

/** Which devices an assignment judges, in words (tag and category names where the role may list them). */
export function scopeWords(a: Record<string, unknown>, choices: TargetChoices | null): string {
  const name = (list: [number, string][] | null | undefined, id: number) =>
    list?.find(([k]) => k === id)?.[1] ?? `#${id}`;
  const ids = (field: string) => (a[field] as number[]) ?? [];
  switch (a.scope) {
    case "all":
      return "every device";
    case "tags":
      return `tags: ${ids("tags")
        .map((id) => name(choices?.tags, id))
        .join(", ")}`;
    case "categories":
      return `categories: ${ids("categories")
        .map((id) => name(choices?.categories, id))
        .join(", ")}`;
    default:
      return plural(ids("devices").length, "device");
  }
}

export function AssignmentForm(props: {
  c: Context<WebEnv>;
  /** Where it posts and what its button says: a new assignment by default. */
  action?: string;
  submit?: string;
  choices: TargetChoices;
  policies: Record<string, unknown>[];
  values: Values;
  problems?: FieldProblems;
}) {
  const { values: v, problems: p, choices } = props;
  const selected = (list: string[] | undefined, id: number) => (list ?? []).includes(String(id));
  return (
    <CsrfForm
      action={props.action ?? "/compliance/assignments/new"}
      csrf={props.c.var.session.csrfToken}
      class="grid-form entity-form"
    >
      <OtherProblems problems={p} fields={FIELDS} />
      <Field id="a-policy_id" name="policy_id" label="Policy" problems={p}>
        <select id="a-policy_id" name="policy_id">
          {props.policies.map((pol) => (
            <option value={String(pol.id)} selected={v.policy_id === String(pol.id)}>
              {String(pol.name)}
            </option>
          ))}
        </select>
      </Field>
      <Field id="a-scope" name="scope" label="Judges" problems={p}>
        <select id="a-scope" name="scope">
          {ASSIGNMENT_SCOPES.map((s) => (
            <option value={s} selected={(v.scope || "all") === s}>
              {SCOPE_LABELS[s]}
            </option>
          ))}
        </select>
      </Field>
      {choices.tags && (
        <Field id="a-tags" name="tags" label="Tags" problems={p} hint="When judging devices by tag.">
          <select id="a-tags" name="tags" multiple size={4}>
            {choices.tags.map(([id, name]) => (
              <option value={String(id)} selected={selected(v.tags, id)}>
                {name}
              </option>
            ))}
          </select>
        </Field>
      )}
      {choices.categories && (
        <Field id="a-categories" name="categories" label="Categories" problems={p} hint="When judging by category.">
          <select id="a-categories" name="categories" multiple size={4}>
            {choices.categories.map(([id, name]) => (
              <option value={String(id)} selected={selected(v.categories, id)}>
                {name}
              </option>
            ))}
          </select>
        </Field>
      )}
      <Field id="a-devices" name="devices" label="Device ids" problems={p} hint="Comma-separated, e.g. 12, 40.">
        <input type="text" id="a-devices" name="devices" value={v.devices ?? ""} />
      </Field>
      <Field id="a-command" name="command" label="Command" problems={p} hint="Empty: the configuration command.">
        <input type="text" id="a-command" name="command" value={v.command ?? ""} />
      </Field>
      <Field id="a-description" name="description" label="Description" problems={p}>
        <input type="text" id="a-description" name="description" value={v.description ?? ""} />
      </Field>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="enabled" value="true" checked={v.enabled !== "false"} /> Enabled
        </label>
      </div>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="run_on_backup" value="true" checked={v.run_on_backup !== "false"} /> Check each
          new backup
        </label>
      </div>
      <div class="actions">
        <button type="submit">{props.submit ?? "Assign"}</button>
        {props.action && <a href="/compliance#assignments">Cancel</a>}
      </div>
    </CsrfForm>
  );
}

/** The assignment form on a page of its own: a refused new assignment, or an assignment being edited. */
export async function assignmentPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  props: { title: string; action?: string; submit?: string; values: Values; problems?: FieldProblems },
) {
  const policies = await policiesResource.list(c.var.services.db, c.var.auth.scope, {
    page: 1,
    perPage: 500,
    where: undefined,
    orderBy: [],
    fields: null,
  });
  return renderPage(c, status, {
    title: props.title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/compliance#assignments">Compliance</a>
        </p>
        <h1>{props.title}</h1>
        <AssignmentForm
          c={c}
          action={props.action}
          submit={props.submit}
          choices={await assignmentChoices(c)}
          policies={policies.rows}
          values={props.values}
          problems={props.problems}
        />
      </section>
    ),
  });
}
