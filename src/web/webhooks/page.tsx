import type { Hono } from "hono";
import { listEnvelope } from "../../http/list.ts";
import { webhookListSpec } from "../../modules/webhooks/routes.ts";
import { listWebhooks } from "../../modules/webhooks/service.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";

/** Webhook subscriptions as GET /webhooks lists them (system.read, a role that sees every device). */
export function registerWebhooksPage(web: Hono<WebEnv>): void {
  web.get("/webhooks", requirePage("system.read"), async (c) => {
    const q = pageListQuery(c, webhookListSpec);
    const { total, rows } = await listWebhooks(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    return renderPage(c, 200, {
      title: "Webhooks",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Webhooks</h1>
          <Pager c={c} meta={meta} noun="subscriptions" />
          {rows.length ? (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Address</th>
                    <th>Events</th>
                    <th>State</th>
                    <th>Created</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((w) => (
                    <tr>
                      <td class="mono">
                        {w.url}
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
}
