import type { Context, Hono } from "hono";
import { listEnvelope, listQuerySchema, parseListQuery } from "../../../platform/http/list.ts";
import { categoriesResource } from "../../../modules/categories/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  pingWebhook,
  redeliverWebhookEvent,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookActor,
} from "../../../modules/webhooks/index.ts";
import {
  deliveryListSpec,
  SUBSCRIBABLE,
  WebhookInput,
  WebhookPatch,
  webhookListSpec,
} from "../../../modules/webhooks/index.ts";
import { listWebhooks, requireWholeEstate, serializeWebhook } from "../../../modules/webhooks/index.ts";
import { plural } from "../../../kernel/words.ts";
import { choices } from "../choices.ts";
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
  type Form,
} from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { hrefWith, Pager, pageListQuery, withoutEmptyFields } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { routeQuery } from "../route-query.ts";
import { requirePage } from "../viewer.ts";

type Webhook = ReturnType<typeof serializeWebhook>;
type Values = {
  url: string;
  description: string;
  event_types: string[];
  tag_ids: string[];
  category_ids: string[];
  enabled: boolean;
};

const FIELDS = ["url", "description", "event_types", "tag_ids", "category_ids", "enabled"];

const DONE: Record<string, string> = {
  saved: "Changes saved.",
  deleted: "Webhook deleted.",
  pinged: "A test ping is queued: a collector delivers it, and the delivery log below shows how the receiver answered.",
  redelivered: "The event is queued again: its new delivery appears in the log below.",
};

const OUTCOMES: Record<string, string> = {
  delivered: "delivered",
  retrying: "retrying",
  failed: "failed",
  gone: "gone (410)",
  refused: "refused address",
};

async function deviceFilters(c: Context<WebEnv>) {
  const [tags, categories] = await Promise.all([
    choices(c, tagsResource, "tags.read", "name"),
    choices(c, categoriesResource, "categories.read", "name"),
  ]);
  return { tags, categories };
}

/** The form as the API's body: no event type ticked means every type (null); a list the role may not read is not sent. */
function inputOf(form: Form, offered: { tags: boolean; categories: boolean }) {
  const values: Values = {
    url: text(form, "url") ?? "",
    description: text(form, "description") ?? "",
    event_types: texts(form, "event_types"),
    tag_ids: ids(form, "tag_ids").map(String),
    category_ids: ids(form, "category_ids").map(String),
    enabled: text(form, "enabled") === "true",
  };
  const input: Record<string, unknown> = {
    url: values.url,
    description: values.description,
    event_types: values.event_types.length ? values.event_types : null,
    enabled: values.enabled,
  };
  if (offered.tags) input.tag_ids = values.tag_ids.map(Number);
  if (offered.categories) input.category_ids = values.category_ids.map(Number);
  return { input, values };
}

function WebhookForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: Values;
  filters: Awaited<ReturnType<typeof deviceFilters>>;
  problems?: FieldProblems;
  submit: string;
  cancel: string;
}) {
  const { values: v, problems: p, filters } = props;
  const Checks = (s: { name: string; label: string; hint: string; options: [string, string][]; chosen: string[] }) => (
    <Field id={`w-${s.name}`} name={s.name} label={s.label} problems={p} hint={s.hint}>
      <fieldset class="checks" id={`w-${s.name}`}>
        {s.options.map(([value, label]) => (
          <label class="check">
            <input type="checkbox" name={s.name} value={value} checked={s.chosen.includes(value)} /> {label}
          </label>
        ))}
      </fieldset>
    </Field>
  );
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <Field
        id="w-url"
        name="url"
        label="Address"
        problems={p}
        hint="http:// or https://; the receiver gets a signed POST."
      >
        <input type="text" id="w-url" name="url" value={v.url} autocomplete="off" />
      </Field>
      <Field id="w-description" name="description" label="Description" problems={p}>
        <input type="text" id="w-description" name="description" value={v.description} autocomplete="off" />
      </Field>
      <Checks
        name="event_types"
        label="Events"
        hint="None ticked: every event."
        options={SUBSCRIBABLE.map((t) => [t, t])}
        chosen={v.event_types}
      />
      {filters.tags && (
        <Checks
          name="tag_ids"
          label="Only devices tagged"
          hint="With the command groups below; none ticked in either: any device."
          options={filters.tags.map(([id, name]) => [String(id), name])}
          chosen={v.tag_ids}
        />
      )}
      {filters.categories && (
        <Checks
          name="category_ids"
          label="Only devices in command group"
          hint="Events about no device are not filtered."
          options={filters.categories.map(([id, name]) => [String(id), name])}
          chosen={v.category_ids}
        />
      )}
      <label class="check">
        <input type="checkbox" name="enabled" value="true" checked={v.enabled} /> Enabled (enabling again clears the
        failures that disabled it)
      </label>
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href={props.cancel}>Cancel</a>
      </div>
    </CsrfForm>
  );
}

/** A signing secret, shown once: only its encryption is kept. */
function SecretOnce(props: { secret: string; what: string }) {
  return (
    <div class="alert warning" role="status" id="new-secret">
      <p>{`${props.what} Copy the signing secret now: it is not shown again.`}</p>
      <div class="secret">
        <code id="secret-value">{props.secret}</code>
        <button type="button" class="secondary" data-copy-from="secret-value">
          Copy
        </button>
      </div>
    </div>
  );
}

const valuesOf = (w: Webhook): Values => ({
  url: w.url,
  description: w.description,
  event_types: w.event_types ?? [],
  tag_ids: w.tag_ids.map(String),
  category_ids: w.category_ids.map(String),
  enabled: w.enabled,
});

/** What the webhook services need from a page's request: the logged-in user as the caller. */
const actorOf = (c: Context<WebEnv>): WebhookActor => ({
  db: c.var.services.db,
  secrets: c.var.services.secrets,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
});

/**
 * Webhook subscriptions (system.read to see, system.write to change, and a role that sees every device, as the
 * API): list, add (the signing secret shown once), edit, delete, rotate the secret (shown once), a test ping, and
 * the delivery log with redeliver.
 */
export function registerWebhooksPage(web: Hono<WebEnv>): void {
  web.get("/webhooks", requirePage("system.read"), async (c) => {
    const q = pageListQuery(c, webhookListSpec);
    const { total, rows } = await listWebhooks(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const canWrite = c.var.auth.abilities.has("system.write");
    const done = DONE[c.req.query("done") ?? ""];
    return renderPage(c, 200, {
      title: "Webhooks",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Webhooks</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p class="muted">
            Each subscription gets a signed POST for the events it chooses.
            {c.var.auth.abilities.has("users.read") && (
              <>
                {" "}
                Mail subscriptions are per user: <a href="/mail">Mail</a>.
              </>
            )}
          </p>
          {canWrite && (
            <p class="actions">
              <a class="button" href="/webhooks/new">
                Add a webhook
              </a>
            </p>
          )}
          <Pager c={c} meta={meta} noun="subscriptions" />
          {rows.length ? (
            <div class="table-wrap">
              <table id="webhook-list">
                <thead>
                  <tr>
                    <th>Address</th>
                    <th>Events</th>
                    <th>State</th>
                    <th>Created</th>
                    <th>
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((w) => (
                    <tr data-id={String(w.id)}>
                      <td class="mono">
                        <a href={`/webhooks/${w.id}`}>{w.url}</a>
                        <div class="muted">{w.description}</div>
                      </td>
                      <td>{w.event_types?.length ? w.event_types.join(", ") : "every event"}</td>
                      <td>
                        <span class={`badge ${w.enabled ? "active" : "disabled"}`}>
                          {w.enabled ? "enabled" : "disabled"}
                        </span>
                        {w.disabled_reason && <div class="muted">{w.disabled_reason}</div>}
                      </td>
                      <td>
                        <Time at={new Date(w.created_at)} none="" />
                      </td>
                      <td>
                        <a href={`/webhooks/${w.id}`}>Deliveries</a>
                        {canWrite && (
                          <>
                            {" "}
                            <a href={`/webhooks/${w.id}/edit`}>Edit</a> <a href={`/webhooks/${w.id}/delete`}>Delete</a>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No webhook subscription yet.</p>
          )}
        </section>
      ),
    });
  });

  const formPage = async (
    c: Context<WebEnv>,
    status: 200 | 422,
    title: string,
    props: Omit<Parameters<typeof WebhookForm>[0], "c" | "filters">,
  ) =>
    renderPage(c, status, {
      title,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/webhooks">Webhooks</a>
          </p>
          <h1>{title}</h1>
          <WebhookForm c={c} {...props} filters={await deviceFilters(c)} />
        </section>
      ),
    });

  web.get("/webhooks/new", requirePage("system.write"), (c) => {
    requireWholeEstate(c.var.auth.scope);
    return formPage(c, 200, "Add a webhook", {
      action: "/webhooks/new",
      values: { url: "", description: "", event_types: [], tag_ids: [], category_ids: [], enabled: true },
      submit: "Add webhook",
      cancel: "/webhooks",
    });
  });

  const offeredOf = async (c: Context<WebEnv>) => {
    const f = await deviceFilters(c);
    return { tags: f.tags !== null, categories: f.categories !== null };
  };

  web.post("/webhooks/new", requirePage("system.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { input, values } = inputOf(form, await offeredOf(c));
    try {
      const { row, secret } = await createWebhook(actorOf(c), parsedBy(WebhookInput, input));
      return webhookPage(c, row.id, { status: 201, secret, secretWhat: "Webhook added." });
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a webhook", {
        action: "/webhooks/new",
        values,
        problems,
        submit: "Add webhook",
        cancel: "/webhooks",
      });
    }
  });

  const existing = async (c: Context<WebEnv>) => {
    requireWholeEstate(c.var.auth.scope);
    return serializeWebhook(await findWebhook(c.var.services.db, pathId(c.req.param("id")!, "Webhook")));
  };

  async function webhookPage(
    c: Context<WebEnv>,
    id: number,
    extra: { status?: 200 | 201; secret?: string; secretWhat?: string } = {},
  ) {
    requireWholeEstate(c.var.auth.scope);
    const w = serializeWebhook(await findWebhook(c.var.services.db, id));
    // The log's query is the API's (filter[outcome], page, per_page): checked by the same schema.
    routeQuery({ request: { query: listQuerySchema(deliveryListSpec) } }, c.req.query());
    const q = parseListQuery(c, deliveryListSpec);
    const { total, rows } = await listDeliveries(c.var.services.db, id, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const canWrite = c.var.auth.abilities.has("system.write");
    const done = DONE[c.req.query("done") ?? ""];
    const outcome = c.req.query("filter[outcome]") ?? "";
    return renderPage(c, extra.status ?? 200, {
      title: `Webhook ${w.url}`,
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <p class="muted">
              <a href="/webhooks">Webhooks</a>
            </p>
            <h1 class="mono">{w.url}</h1>
            {extra.secret && <SecretOnce secret={extra.secret} what={extra.secretWhat ?? ""} />}
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <dl class="details">
              <dt>Description</dt>
              <dd>{w.description || <span class="muted">none</span>}</dd>
              <dt>Events</dt>
              <dd>{w.event_types?.length ? w.event_types.join(", ") : "every event"}</dd>
              <dt>State</dt>
              <dd>
                {w.enabled ? "enabled" : "disabled"}
                {w.disabled_reason && ` (${w.disabled_reason})`}
                {w.consecutive_failures > 0 && `, ${plural(w.consecutive_failures, "failed event")} in a row`}
              </dd>
              <dt>Signing secret</dt>
              <dd>stored (never shown again after it is made)</dd>
            </dl>
            {canWrite && (
              <div class="actions">
                <a class="button" href={`/webhooks/${w.id}/edit`}>
                  Edit
                </a>
                <CsrfForm action={`/webhooks/${w.id}/ping`} csrf={c.var.session.csrfToken} class="inline">
                  <button type="submit" class="secondary">
                    Send a test ping
                  </button>
                </CsrfForm>
                <CsrfForm
                  action={`/webhooks/${w.id}/rotate-secret`}
                  csrf={c.var.session.csrfToken}
                  class="inline"
                  confirm="The old secret stops working at once. Make a new signing secret?"
                >
                  <button type="submit" class="secondary">
                    Rotate the secret
                  </button>
                </CsrfForm>
                <a class="button danger" href={`/webhooks/${w.id}/delete`}>
                  Delete
                </a>
              </div>
            )}
          </section>
          <section class="card" id="deliveries">
            <h2>Delivery log</h2>
            <form method="get" action={`/webhooks/${w.id}#deliveries`} class="filters">
              <div class="field">
                <label for="d-outcome">Outcome</label>
                <select id="d-outcome" name="filter[outcome]">
                  <option value="">any</option>
                  {Object.entries(OUTCOMES).map(([value, label]) => (
                    <option value={value} selected={outcome === value}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
              <button type="submit" class="secondary">
                Show
              </button>
            </form>
            <Pager c={c} meta={meta} noun="deliveries" />
            {rows.length ? (
              <div class="table-wrap">
                <table id="delivery-list">
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>Event</th>
                      <th>Outcome</th>
                      <th>Answer</th>
                      {canWrite && (
                        <th>
                          <span class="visually-hidden">Actions</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((d) => (
                      <tr data-id={String(d.id)}>
                        <td>
                          <Time at={new Date(d.created_at)} none="" />
                        </td>
                        <td>
                          {d.event_type}
                          <div class="muted">{`event ${d.event_id}, attempt ${d.attempt}`}</div>
                        </td>
                        <td>
                          <span class={`badge ${d.outcome === "delivered" ? "ok" : "failed"}`}>
                            {OUTCOMES[d.outcome] ?? d.outcome}
                          </span>
                        </td>
                        <td>
                          {d.status_code != null ? `HTTP ${d.status_code}` : ""}
                          {d.latency_ms != null ? ` in ${d.latency_ms} ms` : ""}
                          {d.message && <div class="muted">{d.message}</div>}
                          {d.response_excerpt && <pre class="snippet">{d.response_excerpt}</pre>}
                        </td>
                        {canWrite && (
                          <td>
                            <CsrfForm
                              action={`/webhooks/${w.id}/deliveries/${d.id}/redeliver`}
                              csrf={c.var.session.csrfToken}
                              class="inline"
                            >
                              <button type="submit" class="secondary">
                                Redeliver
                              </button>
                            </CsrfForm>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">
                {outcome ? (
                  <>
                    No delivery with that outcome. <a href={hrefWith(c, { "filter[outcome]": undefined })}>Show all</a>
                  </>
                ) : (
                  "Nothing delivered yet."
                )}
              </p>
            )}
          </section>
        </>
      ),
    });
  }

  web.get("/webhooks/:id", requirePage("system.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    return webhookPage(c, (await existing(c)).id);
  });

  web.get("/webhooks/:id/edit", requirePage("system.write"), async (c) => {
    const w = await existing(c);
    return formPage(c, 200, "Edit the webhook", {
      action: `/webhooks/${w.id}/edit`,
      values: valuesOf(w),
      submit: "Save changes",
      cancel: `/webhooks/${w.id}`,
    });
  });

  web.post("/webhooks/:id/edit", requirePage("system.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const w = await existing(c);
    const { input, values } = inputOf(form, await offeredOf(c));
    try {
      await updateWebhook(actorOf(c), w.id, parsedBy(WebhookPatch, input));
      return c.redirect(`/webhooks/${w.id}?done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Edit the webhook", {
        action: `/webhooks/${w.id}/edit`,
        values,
        problems,
        submit: "Save changes",
        cancel: `/webhooks/${w.id}`,
      });
    }
  });

  web.get("/webhooks/:id/delete", requirePage("system.write"), async (c) => {
    const w = await existing(c);
    return renderPage(c, 200, {
      title: "Delete the webhook",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Delete the webhook?</h1>
          <p class="mono">{w.url}</p>
          <p>Its delivery log goes with it; events not yet delivered to it are not sent.</p>
          <CsrfForm action={`/webhooks/${w.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the webhook
              </button>
              <a href={`/webhooks/${w.id}`}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });
  });

  web.post("/webhooks/:id/delete", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await deleteWebhook(actorOf(c), (await existing(c)).id);
    return c.redirect("/webhooks?done=deleted", 303);
  });

  web.post("/webhooks/:id/rotate-secret", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const { row, secret } = await rotateWebhookSecret(actorOf(c), (await existing(c)).id);
    return webhookPage(c, row.id, { secret, secretWhat: "New signing secret made; the old one no longer signs." });
  });

  web.post("/webhooks/:id/ping", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const w = await existing(c);
    await pingWebhook(actorOf(c), w.id);
    return c.redirect(`/webhooks/${w.id}?done=pinged`, 303);
  });

  web.post("/webhooks/:id/deliveries/:delivery/redeliver", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const w = await existing(c);
    await redeliverWebhookEvent(actorOf(c), w.id, pathId(c.req.param("delivery"), "Delivery"));
    return c.redirect(`/webhooks/${w.id}?done=redelivered#deliveries`, 303);
  });
}
