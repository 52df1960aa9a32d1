import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { z } from "zod";
import { ApiError } from "../../platform/http/errors.ts";
import { zodToApiError } from "../../platform/http/validation.ts";
import type { WebEnv } from "./env.ts";
import { checkedForm } from "./guard.ts";

export type Form = Record<string, string | File | (string | File)[]>;

/** The session's form, CSRF-checked; null when refused (answer with csrfRefusal). */
export const readForm = (c: Context<WebEnv>): Promise<Form | null> => checkedForm(c, c.var.session.csrfToken);

/** A single text field, as typed; undefined when absent. */
export const text = (form: Form, name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);

/** Every value of a repeated field (checkboxes, multiple selects). */
export const texts = (form: Form, name: string): string[] =>
  ([] as unknown[]).concat(form[name] ?? []).filter((v): v is string => typeof v === "string");

/** Ticked ids: positive whole numbers only. */
export const ids = (form: Form, name: string): number[] =>
  texts(form, name)
    .map(Number)
    .filter((n) => Number.isSafeInteger(n) && n > 0);

/** A form's value checked by the API's own schema: the same rules and the same 422 wording. */
export function parsedBy<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToApiError(result.error);
  return result.data;
}

/** Problems of a 422 by the form field they belong to (`device_tags.2` belongs to `device_tags`), said without the field's name. */
export type FieldProblems = Record<string, string[]>;

export function fieldProblems(err: unknown): FieldProblems | null {
  if (!(err instanceof ApiError) || err.status !== 422) return null;
  const out: FieldProblems = {};
  for (const [key, messages] of Object.entries(err.errors ?? { body: [err.message] })) {
    const field = key.split(".")[0]!;
    for (const m of messages) (out[field] ??= []).push(m.startsWith(`${key} `) ? m.slice(key.length + 1) : m);
  }
  return out;
}

/** A labelled control with its problems underneath, tied to it for screen readers. */
export function Field(props: {
  id: string;
  label: string;
  problems?: FieldProblems;
  name: string;
  hint?: string;
  children?: Child;
}) {
  const problems = props.problems?.[props.name];
  return (
    <div class={`field${problems ? " invalid" : ""}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <div class="muted hint">{props.hint}</div>}
      {problems && (
        <div class="field-error" id={`${props.id}-error`} role="alert">
          {problems.join("; ")}
        </div>
      )}
    </div>
  );
}

/** Problems not tied to a field of the form (shown at its top). */
export function OtherProblems(props: { problems?: FieldProblems; fields: string[] }) {
  const rest = Object.entries(props.problems ?? {})
    .filter(([k]) => !props.fields.includes(k))
    .flatMap(([, v]) => v);
  return rest.length ? (
    <div class="alert error" role="alert">
      {rest.map((m) => (
        <div>{m}</div>
      ))}
    </div>
  ) : null;
}
