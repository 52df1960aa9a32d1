import type { Context, Hono } from "hono";
import { MailSubscriptionsPut } from "../../../modules/mail/index.ts";
import { setMailSubscriptions, showSubscriptions } from "../../../modules/mail/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import { usersResource } from "../../../modules/users/index.ts";
import { choices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { Field, fieldProblems, ids, OtherProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

type Subscriptions = Awaited<ReturnType<typeof showSubscriptions>>;

const FLAGS = [
  ["task_failures", "Task failures: a mail for each run of a task (with failure mail on) that had failed devices"],
  ["config_changes", "Configuration changes: a mail for each new version of a device's configuration"],
  ["compliance_failures", "Compliance failures: a mail when a device stops passing a policy"],
] as const;

/** The user whose subscriptions the page shows: `?user=` (with users.read, as the API), else the caller. */
const userOf = (c: Context<WebEnv>) => {
  const raw = c.req.query("user");
  return raw ? pathId(raw, "User") : c.var.session.userId;
};

async function mailPage(
  c: Context<WebEnv>,
  userId: number,
  state: { status?: 200 | 422; values?: Subscriptions; problems?: FieldProblems; saved?: boolean } = {},
) {
  const subs = state.values ?? (await showSubscriptions(c.var.services.db, userId));
  const canWrite = c.var.auth.abilities.has("users.write");
  const [people, tags] = await Promise.all([
    choices(c, usersResource, "users.read", "username"),
    choices(c, tagsResource, "tags.read", "name"),
  ]);
  const who = people?.find(([id]) => id === userId)?.[1] ?? `user ${userId}`;
  const p = state.problems;
  return renderPage(c, state.status ?? 200, {
    title: "Mail subscriptions",
    session: c.var.session,
    children: (
      <section class="card">
        {c.var.auth.abilities.has("system.read") && c.var.auth.scope.all && (
          <p class="muted">
            <a href="/webhooks">Webhooks</a>
          </p>
        )}
        <h1>Mail subscriptions</h1>
        {state.saved && (
          <p class="alert success" role="status">
            Subscriptions saved.
          </p>
        )}
        <p class="muted">
          What netkeep mails a user (to the address of their account, through the SMTP settings). Mail about a device
          reaches a user only when their role sees the device.
        </p>
        {people && people.length > 1 && (
          <form method="get" action="/mail" class="filters">
            <div class="field">
              <label for="m-user">User</label>
              <select id="m-user" name="user">
                {people.map(([id, name]) => (
                  <option value={String(id)} selected={id === userId}>
                    {name}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" class="secondary">
              Show
            </button>
          </form>
        )}
        <h2>{`Mail for ${who}`}</h2>
        <CsrfForm action={`/mail?user=${userId}`} csrf={c.var.session.csrfToken} class="entity-form">
          <OtherProblems problems={p} fields={[...FLAGS.map(([f]) => f), "config_change_tag_ids"]} />
          {FLAGS.map(([name, label]) => (
            <div class="field">
              <label class="check">
                <input
                  type="checkbox"
                  name={name}
                  value="true"
                  id={`m-${name}`}
                  checked={subs[name]}
                  disabled={!canWrite}
                />{" "}
                {label}
              </label>
            </div>
          ))}
          {tags && (
            <Field
              id="m-config_change_tag_ids"
              name="config_change_tag_ids"
              label="Changes only of devices tagged"
              problems={p}
              hint="None ticked: any device."
            >
              <fieldset class="checks" id="m-config_change_tag_ids">
                {tags.map(([id, name]) => (
                  <label class="check">
                    <input
                      type="checkbox"
                      name="config_change_tag_ids"
                      value={String(id)}
                      checked={subs.config_change_tag_ids.includes(id)}
                      disabled={!canWrite}
                    />{" "}
                    {name}
                  </label>
                ))}
              </fieldset>
            </Field>
          )}
          {canWrite && (
            <div class="actions">
              <button type="submit">Save subscriptions</button>
            </div>
          )}
        </CsrfForm>
      </section>
    ),
  });
}

/**
 * Mail subscriptions per user, as GET/PUT /users/{id}/mail-subscriptions: users.read to see them, users.write to
 * change them (another user's only when the caller may manage that user, as the API).
 */
export function registerMailPage(web: Hono<WebEnv>): void {
  web.get("/mail", requirePage("users.read"), async (c) =>
    mailPage(c, userOf(c), { saved: c.req.query("done") === "saved" }),
  );

  web.post("/mail", requirePage("users.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const userId = userOf(c);
    const tagsOffered = (await choices(c, tagsResource, "tags.read", "name")) !== null;
    const before = await showSubscriptions(c.var.services.db, userId);
    const input = {
      task_failures: text(form, "task_failures") === "true",
      config_changes: text(form, "config_changes") === "true",
      compliance_failures: text(form, "compliance_failures") === "true",
      config_change_tag_ids: tagsOffered ? ids(form, "config_change_tag_ids") : before.config_change_tag_ids,
    };
    try {
      const actor = { db: c.var.services.db, auth: c.var.auth, now: c.var.services.clock.now() };
      await setMailSubscriptions(actor, userId, parsedBy(MailSubscriptionsPut, input));
      return c.redirect(`/mail?user=${userId}&done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return mailPage(c, userId, { status: 422, problems, values: { ...before, ...input } });
    }
  });
}
