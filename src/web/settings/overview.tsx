import type { Hono } from "hono";
import { getSettings, serializeSettings } from "../../modules/settings/service.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";

/** A setting's value in words: lists comma-separated, nothing as "none", booleans as yes/no. */
function shown(value: unknown): string {
  if (value === null || value === undefined || value === "") return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(shown).join(", ") : "none";
  return String(value);
}

/**
 * Settings as GET /api/v1/settings shows them (system.read), section by section, with where each is changed.
 * Secrets are never in the settings record: it says has_password.
 */
export function registerSettingsOverviewPage(web: Hono<WebEnv>): void {
  web.get("/settings", requirePage("system.read"), async (c) => {
    const { updated_at, ...settings } = serializeSettings(await getSettings(c.var.services.db));
    const top = Object.entries(settings).filter(([, v]) => v === null || typeof v !== "object" || Array.isArray(v));
    const sections = Object.entries(settings).filter(
      ([, v]) => v !== null && typeof v === "object" && !Array.isArray(v),
    ) as [string, Record<string, unknown>][];
    const { session } = c.var;
    return renderPage(c, 200, {
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
            <ul class="links">
              {session.isAdmin && (
                <li>
                  <a href="/settings/restapi">REST API Access</a>: API tokens of every user, the API reference and the
                  AI agent docs
                </li>
              )}
              {c.var.auth.abilities.has("users.read") && (
                <li>
                  <a href="/admin/users">Users and roles</a>
                </li>
              )}
            </ul>
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
        </>
      ),
    });
  });
}
