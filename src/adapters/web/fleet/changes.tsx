import type { Hono } from "hono";
import { listEnvelope, parseListQuery } from "../../../platform/http/list.ts";
import { CHANGE_TRIGGERS, changeListSpec, listChanges } from "../../../modules/configs/index.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";

const DEFAULT_PER_PAGE = 50;

/**
 * Every configuration change across the fleet, newest first: GET /api/v2/config-changes (same filters, same
 * scope) as a feed, each change linking to its diff.
 */
export function registerChangesPage(web: Hono<WebEnv>): void {
  web.get("/changes", requirePage("configs.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = parseListQuery(c, changeListSpec);
    if (!c.req.query("per_page") && !c.req.query("perPage")) q.perPage = DEFAULT_PER_PAGE;
    const { total, rows } = await listChanges(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const value = (name: string) => c.req.query(name) ?? "";
    const Text = (p: { id: string; name: string; label: string; type?: string }) => (
      <div class="field">
        <label for={p.id}>{p.label}</label>
        <input type={p.type ?? "search"} id={p.id} name={p.name} value={value(p.name)} />
      </div>
    );
    return renderPage(c, 200, {
      title: "Changes",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Configuration changes</h1>
          <form method="get" action="/changes" class="filters">
            <Text id="changes-device" name="filter[device_name]" label="Device" />
            <Text id="changes-tag" name="filter[device_tags]" label="Tag" />
            <Text id="changes-command" name="filter[command]" label="Command" />
            <div class="field">
              <label for="changes-trigger">Trigger</label>
              <select id="changes-trigger" name="filter[trigger]">
                <option value="">Any</option>
                {CHANGE_TRIGGERS.map((t) => (
                  <option value={t} selected={value("filter[trigger]") === t}>
                    {t}
                  </option>
                ))}
              </select>
            </div>
            <Text id="changes-from" name="filter[date_from]" label="From" type="date" />
            <Text id="changes-to" name="filter[date_to]" label="To" type="date" />
            <div class="field">
              <button type="submit">Apply</button>
            </div>
          </form>
          <Pager c={c} meta={meta} noun="changes" />
          <div class="table-wrap">
            <table class="changes">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Device</th>
                  <th>Command</th>
                  <th>Change</th>
                  <th>Lines</th>
                  <th>Trigger</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr>
                    <td>
                      <Time at={new Date(r.created_at)} none="" />
                    </td>
                    <td>
                      <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
                    </td>
                    <td>
                      <code>{r.command}</code>
                    </td>
                    <td>
                      {r.previous_config_id === null ? (
                        <a
                          href={`/configs/${r.config_id}`}
                        >{`v${r.version} (${r.previous_version === null && r.version === 1 ? "first version" : "previous version deleted"})`}</a>
                      ) : (
                        <a
                          href={`/configs/diff?from=${r.previous_config_id}&to=${r.config_id}`}
                        >{`v${r.previous_version} → v${r.version}`}</a>
                      )}
                    </td>
                    <td>
                      <span class="added">{`+${r.lines_added}`}</span>{" "}
                      <span class="removed">{`-${r.lines_removed}`}</span>
                      {r.secrets_changed ? (
                        <span class="secrets-changed" title="Secret values changed (values not stored)">
                          {" "}
                          secrets changed
                        </span>
                      ) : null}
                    </td>
                    <td>{r.trigger}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ),
    });
  });
}
