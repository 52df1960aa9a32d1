import type { Context } from "hono";
import { ASSIGNMENT_SCOPES } from "../../../modules/compliance/index.ts";
import { plural } from "../../../kernel/words.ts";
import { targetChoices, type TargetChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { Field, OtherProblems, type FieldProblems, type Form, ids, text } from "../form.tsx";
import { CsrfForm } from "../layout.tsx";

export const assignmentChoices = targetChoices;

const SCOPE_LABELS: Record<(typeof ASSIGNMENT_SCOPES)[number], string> = {
  all: "every device",
  tags: "devices with any of these tags",
  categories: "devices in any of these categories",
  devices: "these devices (ids)",
};

const FIELDS = ["policy_id", "scope", "tags", "categories", "devices", "command", "description", "run_on_backup"];

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
      run_on_backup: text(form, "run_on_backup") ?? "false",
    },
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
  choices: TargetChoices;
  policies: Record<string, unknown>[];
  values: Values;
  problems?: FieldProblems;
}) {
  const { values: v, problems: p, choices } = props;
  const selected = (list: string[] | undefined, id: number) => (list ?? []).includes(String(id));
  return (
    <CsrfForm action="/compliance/assignments/new" csrf={props.c.var.session.csrfToken} class="grid-form entity-form">
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
          <input type="checkbox" name="run_on_backup" value="true" checked={v.run_on_backup !== "false"} /> Check each
          new backup
        </label>
      </div>
      <div class="actions">
        <button type="submit">Assign</button>
      </div>
    </CsrfForm>
  );
}
