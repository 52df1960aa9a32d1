import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { sendTestMail, TestMailBody } from "../../../modules/mail/index.ts";
import { SETTINGS_DEFAULTS, SettingsPatch } from "../../../platform/settings/schema.ts";
import { getSettings, serializeSettings, updateSettings } from "../../../platform/settings/service.ts";
import type { WebEnv } from "../env.ts";
import { fieldProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";
import { GENERAL, patchFromForm, SectionForm, sectionProblems, sectionsOf } from "./settings-form.tsx";
import { TestMailForm, type TestMailState } from "./test-mail.tsx";

/** A setting's value in words: lists comma-separated, nothing as "none", booleans as yes/no. */
function shown(value: unknown): string {
  if (value === null || value === undefined || value === "") return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(shown).join(", ") : "none";
  return String(value);
}

/** Whether the viewer may change settings: system.write, and a role that sees every device (as the API demands). */
const canChange = (c: Context<WebEnv>) => c.var.auth.abilities.has("system.write") && c.var.auth.scope.all;

/** A section's refused form: what was typed, and the problems by field. */
type Refused = { section: string; typed: Record<string, string>; problems: FieldProblems };

/** What a page render carries back from a form: a refused section, or the test mail's outcome. */
type Outcome = { refused?: Refused; testMail?: TestMailState };

/** The test-send, after the sections: to a role that may send (system.write, as the API route; it changes no setting). */
const testMail = (c: Context<WebEnv>, state?: TestMailState) =>
  c.var.auth.abilities.has("system.write") ? <TestMailForm csrf={c.var.session.csrfToken} state={state} /> : null;

/**
 * Settings as GET /api/v1/settings shows them (system.read), section by section. A viewer who may change them
 * (system.write, every device in scope) gets one form per section instead, saved through the same service and
 * checks as PATCH /api/v1/settings; anyone else gets no form at all. Secrets are never shown: "set" or "not set".
 */
export function registerSettingsOverviewPage(web: Hono<WebEnv>): void {
  web.get("/settings", requirePage("system.read"), (c) => settingsPage(c, 200));

  // The page answers itself (no redirect): the outcome names the address, which an address bar must not carry.
  web.post("/settings/smtp/test", requirePage("system.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const to = text(form, "to") ?? "";
    try {
      const { to: address } = parsedBy(TestMailBody, { to: to.trim() });
      const { db, secrets } = c.var.services;
      const sent = await sendTestMail(db, secrets, c.var.auth.username, address);
      return settingsPage(c, 200, { testMail: { to, sent } });
    } catch (err) {
      const problems = fieldProblems(err);
      if (problems?.to) return settingsPage(c, 422, { testMail: { to, problems } });
      if (err instanceof ApiError && (err.status === 422 || err.status === 502))
        return settingsPage(c, err.status, { testMail: { to, refusal: err.message } });
      throw err;
    }
  });

  // One route per section's own name: any other /settings/... (the REST API pages' forms among them) is not
  // taken here, and stays a 404 page rather than a 405 for a POST-only route.
  const names = [GENERAL, ...Object.keys(SETTINGS_DEFAULTS)].filter((n) => /^[a-z_]+$/.test(n));
  web.on(
    "POST",
    names.map((name) => `/settings/${name}`),
    requirePage("system.write"),
    async (c) => {
      const form = await readForm(c);
      if (!form) return csrfRefusal(c, c.var.session);
      if (!canChange(c))
        return renderPage(c, 403, {
          title: "Settings",
          session: c.var.session,
          children: (
            <section class="card">
              <p class="alert error" role="alert">
                Settings apply to every device; changing them needs a role that sees all devices.
              </p>
            </section>
          ),
        });
      const section = c.req.path.slice("/settings/".length);
      const { db, clock, secrets } = c.var.services;
      const { updated_at: _, ...current } = serializeSettings(await getSettings(db));
      const values = sectionsOf(current).find(([name]) => name === section)?.[1];
      if (!values) return c.notFound();
      const { patch, typed, problems } = patchFromForm(section, values, form);
      if (Object.keys(problems).length) return settingsPage(c, 422, { refused: { section, typed, problems } });
      try {
        const checked = parsedBy(SettingsPatch, patch);
        await db.transaction((tx) => updateSettings(tx, checked, secrets, c.var.auth, clock.now()));
      } catch (err) {
        const found = sectionProblems(section, err);
        if (!found) throw err;
        return settingsPage(c, 422, { refused: { section, typed, problems: found } });
      }
      return c.redirect(`/settings?saved=${encodeURIComponent(section)}#settings-${section}`, 303);
    },
  );
}

/** Where the settings that are not in this document are managed. */
function SettingsLinks(props: { c: Context<WebEnv> }) {
  const { c } = props;
  return (
    <ul class="links">
      {c.var.session.isAdmin && (
        <li>
          <a href="/settings/restapi">REST API Access</a>: the API reference and the AI agent docs
        </li>
      )}
      <li>
        <a href="/tokens">API tokens</a>
      </li>
      {c.var.auth.abilities.has("users.read") && (
        <li>
          <a href="/admin/users">Users and roles</a>
        </li>
      )}
    </ul>
  );
}

async function settingsPage(c: Context<WebEnv>, status: 200 | 422 | 502, outcome: Outcome = {}) {
  {
    const { updated_at, ...settings } = serializeSettings(await getSettings(c.var.services.db));
    if (canChange(c)) return editPage(c, status, settings, updated_at, outcome);
    const top = Object.entries(settings).filter(([, v]) => v === null || typeof v !== "object" || Array.isArray(v));
    const sections = Object.entries(settings).filter(
      ([, v]) => v !== null && typeof v === "object" && !Array.isArray(v),
    ) as [string, Record<string, unknown>][];
    const { session } = c.var;
    return renderPage(c, status, {
      title: "Settings",
      session,
      children: (
        <>
          <section class="card">
            <h1>Settings</h1>
            <p class="muted">
              Last changed: <Time at={updated_at ? new Date(updated_at) : null} none="never (the defaults)" />. They are
              changed through <code>PATCH /api/v1/settings</code> (system.write, a role that sees every device); the
              page shows them as the API does.
            </p>
            <SettingsLinks c={c} />
            <dl class="details" id="settings-general">
              {top.map(([k, v]) => (
                <>
                  <dt>{k}</dt>
                  <dd>{shown(v)}</dd>
                </>
              ))}
            </dl>
          </section>
          {sections.map(([name, values]) => (
            <section class="card" id={`settings-${name}`}>
              <h2>{name}</h2>
              <dl class="details">
                {Object.entries(values).map(([k, v]) => (
                  <>
                    <dt>{k}</dt>
                    <dd>{v !== null && typeof v === "object" && !Array.isArray(v) ? JSON.stringify(v) : shown(v)}</dd>
                  </>
                ))}
              </dl>
            </section>
          ))}
          {testMail(c, outcome.testMail)}
        </>
      ),
    });
  }
}

function editPage(
  c: Context<WebEnv>,
  status: 200 | 422 | 502,
  settings: Record<string, unknown>,
  updatedAt: string | null,
  { refused, testMail: mailed }: Outcome,
) {
  const saved = c.req.query("saved");
  return renderPage(c, status, {
    title: "Settings",
    session: c.var.session,
    children: (
      <>
        <section class="card">
          <h1>Settings</h1>
          <p class="muted">
            Last changed: <Time at={updatedAt ? new Date(updatedAt) : null} none="never (the defaults)" />. The same
            settings as <code>PATCH /api/v1/settings</code>, one form per section; a change applies at once and is
            recorded in the activity log. Secrets are write-only: the page says only whether one is set.
          </p>
          <SettingsLinks c={c} />
          {saved && status === 200 && (
            <p class="alert success" role="status">
              Saved: {saved}.
            </p>
          )}
        </section>
        {sectionsOf(settings).map(([name, values]) => (
          <section class="card" id={`settings-${name}`}>
            <h2>{name}</h2>
            {refused?.section === name && (
              <p class="alert error" role="alert">
                Not saved: fix the fields marked below.
              </p>
            )}
            <SectionForm
              section={name}
              values={values}
              csrf={c.var.session.csrfToken}
              typed={refused?.section === name ? refused.typed : undefined}
              problems={refused?.section === name ? refused.problems : undefined}
            />
          </section>
        ))}
        {testMail(c, mailed)}
      </>
    ),
  });
}
