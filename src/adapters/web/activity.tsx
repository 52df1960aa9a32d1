import type { Hono } from "hono";
import { listEnvelope } from "../../platform/http/list.ts";
import { activityListSpec, listActivity, type ActivityOut } from "../../modules/activity/index.ts";
import type { WebEnv } from "./env.ts";
import { Time } from "./format.tsx";
import { renderPage } from "./layout.tsx";
import { Pager, pageListQuery, withoutEmptyFields } from "./list-page.tsx";
import { requirePage } from "./viewer.ts";
import { plural } from "../../kernel/words.ts";

/** A changed value as a short text: JSON for lists and objects, cut at 80 characters. */
function shown(value: unknown): string {
  const text =
    value === null || value === undefined ? "none" : typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function Changes(props: { changes: ActivityOut["changes"] }) {
  const entries = Object.entries(props.changes);
  if (!entries.length) return <span class="muted">no field changed</span>;
  return (
    <details>
      <summary>
        {entries.length > 3
          ? `${plural(entries.length, "field")}: ${entries
              .slice(0, 3)
              .map(([k]) => k)
              .join(", ")}…`
          : entries.map(([k]) => k).join(", ")}
      </summary>
      <ul class="rule-lines">
        {entries.map(([field, { old, new: now }]) => (
          <li>
            <code>{field}</code>: {shown(old)} → {shown(now)}
          </li>
        ))}
      </ul>
    </details>
  );
}

/**
 * The activity log as GET /activity-logs answers it (users.read; a scoped role sees only entries about its
 * devices), filtered by user, device and action; the address is the API's query.
 */
export function registerActivityPage(web: Hono<WebEnv>): void {
  web.get("/activity", requirePage("users.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, activityListSpec);
    const { total, rows } = await listActivity(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const value = (name: string) => c.req.query(name) ?? "";
    return renderPage(c, 200, {
      title: "Activity log",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Activity log</h1>
          <p class="muted">Every change, by whom, with which token or web session, from where, newest first.</p>
          <form method="get" action="/activity" class="filters" role="search">
            <div class="field">
              <label for="f-user">User</label>
              <input type="search" id="f-user" name="filter[username]" value={value("filter[username]")} />
            </div>
            <div class="field">
              <label for="f-device">Device id</label>
              <input type="search" id="f-device" name="filter[device]" value={value("filter[device]")} />
            </div>
            <div class="field">
              <label for="f-action">Action</label>
              <input
                type="search"
                id="f-action"
                name="filter[action]"
                value={value("filter[action]")}
                placeholder="device.update"
              />
            </div>
            <div class="field grow">
              <label for="f-search">Search</label>
              <input type="search" id="f-search" name="search" value={value("search")} />
            </div>
            <div class="field">
              <button type="submit">Apply</button>
            </div>
          </form>
          <Pager c={c} meta={meta} noun="entries" />
          {rows.length ? (
            <div class="table-wrap">
              <table id="activity-list">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Who</th>
                    <th>Action</th>
                    <th>Record</th>
                    <th>Changes</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr>
                      <td>
                        <Time at={new Date(r.created_at)} none="" />
                      </td>
                      <td>
                        {r.username ?? <span class="muted">system</span>}
                        <div class="muted">{[r.token_name, r.ip].filter(Boolean).join(", ")}</div>
                      </td>
                      <td>
                        <code>{r.action}</code>
                      </td>
                      <td>
                        {r.subject_type === "device" && r.subject_id ? (
                          <a href={`/devices/${r.subject_id}`}>{`device ${r.subject_id}`}</a>
                        ) : (
                          `${r.subject_type}${r.subject_id ? ` ${r.subject_id}` : ""}`
                        )}
                      </td>
                      <td>
                        <Changes changes={r.changes} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No entry matches.</p>
          )}
        </section>
      ),
    });
  });
}
