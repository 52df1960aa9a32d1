import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { Resource } from "../../../platform/auth/abilities.ts";
import type { DeviceScope } from "../../../platform/auth/scope.ts";
import type { DbOrTx } from "../../../db/client.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { plural } from "../../../kernel/words.ts";
import { asApi } from "../api-context.ts";
import type { WebEnv } from "../env.ts";
import { ids, readForm, text } from "../form.tsx";
import { csrfRefusal, safeNext } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";

type Row = { id: number } & Record<string, unknown>;

/** What a declared resource (platform/http/resource.ts) offers a bulk delete: the API's own reads and deletes. */
export type BulkDeletable = {
  show(db: DbOrTx, id: number, scope: DeviceScope): Promise<Row>;
  remove(c: Context<AppEnv>, ids: number[], bulk: boolean): Promise<{ count: number; note: string }>;
  previewRemove(c: Context<AppEnv>, ids: number[]): Promise<Map<number, { refusal: string } | { note: string }>>;
};

export type BulkDeleteSpec = {
  /** The list's path, e.g. "/vendors"; the selection posts to `${path}/bulk-delete`. */
  path: string;
  singular: string;
  plural: string;
  ability: Resource;
  resource: BulkDeletable;
  nameOf: (row: Row) => string;
};

/** The API's bulk limit. */
const MAX_BULK = 1000;

/** The done message of a bulk delete (`?done=bulk-deleted&n=3`), for the list's flash. */
export function bulkDeletedMessage(c: Context<WebEnv>, spec: Pick<BulkDeleteSpec, "singular" | "plural">) {
  if (c.req.query("done") !== "bulk-deleted") return undefined;
  const n = Number(c.req.query("n"));
  return Number.isSafeInteger(n) && n > 0 ? `Deleted ${n} ${n === 1 ? spec.singular : spec.plural}.` : undefined;
}

/** A row's tick box for the list's bulk form. */
export const SelectBox = (props: { id: number; name: string }) => (
  <input type="checkbox" name="ids" value={String(props.id)} aria-label={`Select ${props.name}`} />
);

/**
 * The list's table inside the bulk form, with **Delete selected** under it (and, after an empty selection, the
 * problem next to it). Without the write ability: the table alone, no tick boxes (the caller leaves them out).
 */
export function BulkDeleteForm(props: { c: Context<WebEnv>; spec: BulkDeleteSpec; children: Child }) {
  const { c, spec } = props;
  if (!c.var.auth.abilities.has(`${spec.ability}.write`)) return <>{props.children}</>;
  const url = new URL(c.req.url);
  url.searchParams.delete("selection");
  url.searchParams.delete("done");
  url.searchParams.delete("n");
  const empty = c.req.query("selection") === "empty";
  return (
    <CsrfForm action={`${spec.path}/bulk-delete`} csrf={c.var.session.csrfToken}>
      <input type="hidden" name="back" value={url.pathname + url.search} />
      {props.children}
      <div class={`actions bulk-actions field${empty ? " invalid" : ""}`} id="bulk-delete">
        <span class="muted">Selected:</span>
        <button
          type="submit"
          name="step"
          value="confirm"
          class="danger"
          aria-describedby={empty ? "ids-error" : undefined}
        >
          Delete selected
        </button>
        {empty && (
          <div class="field-error" id="ids-error" role="alert">
            {`Tick at least one ${spec.singular} to delete.`}
          </div>
        )}
      </div>
    </CsrfForm>
  );
}

/** The ticked ids, as the bulk API checks them: whole positive numbers, at most 1000. */
function selected(values: unknown[], list: number[], spec: BulkDeleteSpec): number[] {
  if (values.length > MAX_BULK)
    throw ApiError.validation({ ids: [`Tick at most ${MAX_BULK} ${spec.plural} at a time`] });
  if (list.length !== values.length) throw ApiError.validation({ ids: [`ids must be ${spec.singular} ids`] });
  return [...new Set(list)];
}

/**
 * POST `${path}/bulk-delete`: `step=confirm` shows the ticked records, each with what deleting it would do or why
 * the API refuses it (checked by the delete itself and rolled back); `step=delete` deletes the ticked ones through
 * the API's bulk delete, all or nothing: a refusal shows the confirmation again, with nothing deleted.
 */
export function registerBulkDelete(web: Hono<WebEnv>, spec: BulkDeleteSpec): void {
  const title = `Delete ${spec.plural}`;

  async function confirmPage(c: Context<WebEnv>, list: number[], back: string, refusal?: string) {
    const rows = await Promise.all(list.map((id) => spec.resource.show(c.var.services.db, id, c.var.auth.scope)));
    const previews = await spec.resource.previewRemove(asApi(c), list);
    const deletable = rows.filter((r) => !previews.get(r.id) || "note" in previews.get(r.id)!);
    return renderPage(c, refusal ? 409 : 200, {
      title,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href={back}>{spec.plural.charAt(0).toUpperCase() + spec.plural.slice(1)}</a>
          </p>
          <h1>{`Delete ${plural(rows.length, spec.singular, spec.plural)}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {`Nothing was deleted: ${refusal}`}
            </p>
          )}
          <CsrfForm action={`${spec.path}/bulk-delete`} csrf={c.var.session.csrfToken}>
            <input type="hidden" name="back" value={back} />
            <ul class="bulk-delete-list" id="bulk-delete-list">
              {rows.map((r) => {
                const preview = previews.get(r.id);
                const refused = preview && "refusal" in preview ? preview.refusal : undefined;
                return refused ? (
                  <li data-id={String(r.id)} class="refused">
                    <strong>{spec.nameOf(r)}</strong>
                    <div class="field-error" role="alert">{`Cannot be deleted: ${refused}`}</div>
                  </li>
                ) : (
                  <li data-id={String(r.id)}>
                    <label class="check">
                      <input type="checkbox" name="ids" value={String(r.id)} checked />{" "}
                      <strong>{spec.nameOf(r)}</strong>
                    </label>
                    {preview && "note" in preview && preview.note && <div class="muted">{preview.note}</div>}
                  </li>
                );
              })}
            </ul>
            <p class="muted">
              {deletable.length
                ? `The ticked ones are deleted together, or none of them if one is refused. This cannot be undone.`
                : `None of these can be deleted.`}
            </p>
            <div class="actions">
              {deletable.length > 0 && (
                <button type="submit" name="step" value="delete" class="danger">
                  {`Delete the ticked ${spec.plural}`}
                </button>
              )}
              <a href={back}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });
  }

  web.post(`${spec.path}/bulk-delete`, requirePage(`${spec.ability}.write`), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const backText = safeNext(text(form, "back"));
    const back = backText && new URL(backText, "http://x").pathname === spec.path ? backText : spec.path;
    const values = ([] as unknown[]).concat(form.ids ?? []);
    if (values.length === 0) {
      const url = new URL(back, "http://x");
      url.searchParams.set("selection", "empty");
      return c.redirect(`${url.pathname}${url.search}#bulk-delete`, 303);
    }
    const list = selected(values, ids(form, "ids"), spec);
    if (text(form, "step") !== "delete") return confirmPage(c, list, back);
    let count: number;
    try {
      ({ count } = await spec.resource.remove(asApi(c), list, true));
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 403))
        return confirmPage(c, list, back, err.message);
      throw err;
    }
    const url = new URL(back, "http://x");
    url.searchParams.set("done", "bulk-deleted");
    url.searchParams.set("n", String(count));
    return c.redirect(url.pathname + url.search, 303);
  });
}
