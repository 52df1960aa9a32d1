import { z } from "@hono/zod-openapi";
import { ApiError } from "../../../platform/http/errors.ts";
import { SettingsPatch } from "../../../platform/settings/schema.ts";
import { Field, OtherProblems, text, type FieldProblems, type Form } from "../form.tsx";
import { CsrfForm } from "../layout.tsx";

/**
 * One form per settings section, built from what GET /api/v1/settings shows and what PATCH accepts, so a new
 * setting gets its field without a change here. Fields at the top level (timezone, login_banner, ...) form the
 * "general" section. Secrets are write-only: the has_* flag says "set" or "not set", an empty field keeps the
 * stored one, a ticked "remove" sends null.
 */
export const GENERAL = "general";

/** A section's write-only secret, by the has_* flag GET shows for it. */
const SECRET_FLAGS: Record<string, string> = {
  has_password: "password",
  has_bind_password: "bind_password",
  has_client_secret: "client_secret",
};
/** Free text that spans lines. */
const MULTILINE = new Set(["login_banner", "ca_certificate"]);

type Section = Record<string, unknown>;

/** Each section's values as GET shows them: "general" holds the top-level scalars. */
export function sectionsOf(settings: Record<string, unknown>): [string, Section][] {
  const general: Section = {};
  const out: [string, Section][] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (key === "updated_at") continue;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) out.push([key, value as Section]);
    else general[key] = value;
  }
  return [[GENERAL, general], ...out];
}

/** The PATCH schema of one field (optional/nullable unwrapped), to know enums and whether null is allowed. */
function patchField(section: string, field: string): z.ZodType | undefined {
  const shape = (SettingsPatch as unknown as z.ZodObject).shape as Record<string, z.ZodType>;
  if (section === GENERAL) return shape[field];
  const inner = shape[section];
  if (!inner) return undefined;
  const object = (inner instanceof z.ZodOptional ? inner.unwrap() : inner) as z.ZodObject;
  return (object.shape as Record<string, z.ZodType>)[field];
}

const accepts = (schema: z.ZodType | undefined, value: unknown) => Boolean(schema?.safeParse(value).success);

function enumOptions(schema: z.ZodType | undefined): string[] | null {
  let s: unknown = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
  return s instanceof z.ZodEnum ? (s.options as string[]) : null;
}

function listOfObjects(schema: z.ZodType | undefined): boolean {
  let s: unknown = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap();
  return s instanceof z.ZodArray && s.element instanceof z.ZodObject;
}

type Kind = "boolean" | "number" | "text" | "multiline" | "enum" | "map" | "list" | "json" | "secret";

function kindOf(section: string, field: string, value: unknown): Kind {
  if (enumOptions(patchField(section, field))) return "enum";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return "number";
  if (Array.isArray(value)) return listOfObjects(patchField(section, field)) ? "json" : "list";
  if (value !== null && typeof value === "object") return "map";
  if (MULTILINE.has(field)) return "multiline";
  if (value === null && !accepts(patchField(section, field), "x") && accepts(patchField(section, field), 1))
    return "number";
  return "text";
}

/** The form's text for a value, as the field shows it (and as a refused form shows back what was typed). */
function shownValue(kind: Kind, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (kind === "map")
    return Object.entries(value as Record<string, string>)
      .map(([k, v]) => `${k} = ${v}`)
      .join("\n");
  if (kind === "list") return (value as string[]).join("\n");
  if (kind === "json") return JSON.stringify(value, null, 2);
  return String(value);
}

/** What one section's form sends, as that section's part of a PATCH body. */
export function patchFromForm(
  section: string,
  current: Section,
  form: Form,
): { patch: Record<string, unknown>; typed: Record<string, string>; problems: FieldProblems } {
  const values: Record<string, unknown> = {};
  const typed: Record<string, string> = {};
  const problems: FieldProblems = {};
  for (const [field, value] of Object.entries(current)) {
    const secret = SECRET_FLAGS[field];
    if (secret) {
      const given = text(form, secret) ?? "";
      if (given) values[secret] = given;
      else if (text(form, `remove_${secret}`) === "true") values[secret] = null;
      continue;
    }
    const kind = kindOf(section, field, value);
    if (kind === "boolean") {
      values[field] = text(form, field) === "true";
      continue;
    }
    const raw = text(form, field);
    if (raw === undefined) continue;
    typed[field] = raw;
    const trimmed = raw.trim();
    const schema = patchField(section, field);
    if (kind === "number")
      values[field] =
        trimmed === "" ? (accepts(schema, null) ? null : raw) : /^-?\d+$/.test(trimmed) ? Number(trimmed) : raw;
    else if (kind === "map") {
      const map: Record<string, string> = {};
      for (const line of raw
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean)) {
        const at = line.lastIndexOf("=");
        if (at <= 0) (problems[field] ??= []).push(`write each line as "group = role": '${line}' has no '='`);
        else map[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      }
      values[field] = map;
    } else if (kind === "list")
      values[field] = raw
        .split(/[\r\n,]+/)
        .map((l) => l.trim())
        .filter(Boolean);
    else if (kind === "json") {
      try {
        values[field] = trimmed === "" ? [] : JSON.parse(raw);
      } catch {
        (problems[field] ??= []).push("must be a JSON list, e.g. []");
      }
    } else values[field] = trimmed === "" && accepts(schema, null) ? null : raw;
  }
  return { patch: section === GENERAL ? values : { [section]: values }, typed, problems };
}

/** A 422's problems by this section's field (`ldap.directories.0.url` belongs to `directories`), without the name. */
export function sectionProblems(section: string, err: unknown): FieldProblems | null {
  if (!(err instanceof ApiError) || err.status !== 422) return null;
  const out: FieldProblems = {};
  for (const [key, messages] of Object.entries(err.errors ?? { body: [err.message] })) {
    const path = section === GENERAL ? key : key.startsWith(`${section}.`) ? key.slice(section.length + 1) : key;
    const field = SECRET_FLAGS_BY_NAME[path.split(".")[0]!] ?? path.split(".")[0]!;
    for (const m of messages) (out[field] ??= []).push(m.startsWith(`${key} `) ? m.slice(key.length + 1) : m);
  }
  return out;
}
const SECRET_FLAGS_BY_NAME = Object.fromEntries(Object.entries(SECRET_FLAGS).map(([flag, name]) => [name, flag]));

const HINTS: Partial<Record<Kind, string>> = {
  map: 'One "group = role" per line; the first line whose group the user is in gives the role.',
  list: "One per line.",
  json: "A JSON list; sent whole (docs/users.md). An entry without bind_password keeps the stored one.",
};

export function SectionForm(props: {
  section: string;
  values: Section;
  csrf: string;
  typed?: Record<string, string>;
  problems?: FieldProblems;
}) {
  const { section, values, typed, problems } = props;
  const id = (field: string) => `s-${section}-${field}`;
  const fields = Object.keys(values);
  return (
    <CsrfForm action={`/settings/${section}`} csrf={props.csrf} class="grid-form settings-form">
      <OtherProblems problems={problems} fields={fields} />
      {Object.entries(values).map(([field, value]) => {
        const secret = SECRET_FLAGS[field];
        if (secret)
          return (
            <Field
              id={id(secret)}
              name={field}
              label={secret}
              problems={problems}
              hint={value ? "set (never shown): leave empty to keep it" : "not set"}
            >
              <input type="password" id={id(secret)} name={secret} autocomplete="new-password" />
              {value ? (
                <label class="check">
                  <input type="checkbox" name={`remove_${secret}`} value="true" /> remove the stored one
                </label>
              ) : null}
            </Field>
          );
        const kind = kindOf(section, field, value);
        const shown = typed?.[field] ?? shownValue(kind, value);
        const options = enumOptions(patchField(section, field));
        return (
          <Field id={id(field)} name={field} label={field} problems={problems} hint={HINTS[kind]}>
            {kind === "boolean" ? (
              <label class="check">
                <input type="checkbox" id={id(field)} name={field} value="true" checked={Boolean(value)} /> on
              </label>
            ) : kind === "enum" ? (
              <select id={id(field)} name={field}>
                {options!.map((o) => (
                  <option value={o} selected={o === shown}>
                    {o}
                  </option>
                ))}
              </select>
            ) : kind === "text" || kind === "number" ? (
              <input
                type={kind === "number" ? "text" : "text"}
                inputmode={kind === "number" ? "numeric" : undefined}
                id={id(field)}
                name={field}
                value={shown}
                autocomplete="off"
              />
            ) : (
              <textarea id={id(field)} name={field} rows={kind === "json" ? 6 : 3} class="code">
                {shown}
              </textarea>
            )}
          </Field>
        );
      })}
      <div class="actions">
        <button type="submit">Save {section}</button>
      </div>
    </CsrfForm>
  );
}
