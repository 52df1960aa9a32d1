import type { Hono } from "hono";
import { listEnvelope } from "../../../platform/http/list.ts";
import { snippetsResource } from "../../../modules/snippets/index.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";

const DONE: Record<string, string> = { deleted: "Snippet deleted." };

/** Snippets as GET /snippets lists them: name, variables, the lines; each links to its page (deploy, edit). */
export function registerSnippetsPage(web: Hono<WebEnv>): void {
  web.get("/snippets", requirePage("snippets.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, snippetsResource.listSpec);
    const { total, rows } = await snippetsResource.list(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    return renderPage(c, 200, {
      title: "Snippets",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Snippets</h1>
          {DONE[c.req.query("done") ?? ""] && (
            <p class="alert success" role="status">
              {DONE[c.req.query("done") ?? ""]}
            </p>
          )}
          <p class="actions">
            {c.var.auth.abilities.has("snippets.write") && (
              <a class="button" href="/snippets/new">
                Add a snippet
              </a>
            )}
            <a href="/snippets/deployments">Deployments</a>
          </p>
          <form method="get" action="/snippets" class="filters" role="search">
            <div class="field grow">
              <label for="snippet-search">Search</label>
              <input type="search" id="snippet-search" name="search" value={c.req.query("search") ?? ""} />
            </div>
            <div class="field">
              <button type="submit">Apply</button>
            </div>
          </form>
          <Pager c={c} meta={meta} noun="snippets" />
          {rows.length ? (
            <div class="table-wrap">
              <table id="snippet-list">
                <thead>
                  <tr>
                    <th>Snippet</th>
                    <th>Variables</th>
                    <th>Lines</th>
                    <th>Changed</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((s) => (
                    <tr>
                      <td>
                        <a href={`/snippets/${s.id}`}>
                          <strong>{String(s.name)}</strong>
                        </a>
                        <div class="muted">{String(s.description)}</div>
                      </td>
                      <td>
                        {(s.variables as string[]).map((v) => (
                          <code>{v}</code>
                        ))}
                      </td>
                      <td>
                        <pre class="snippet">{String(s.content)}</pre>
                      </td>
                      <td>
                        <Time at={new Date(String(s.updated_at))} none="" />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No snippet yet.</p>
          )}
        </section>
      ),
    });
  });
}
