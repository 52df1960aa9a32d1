import type { Hono } from "hono";
import { listEnvelope } from "../../http/list.ts";
import { snippetsResource } from "../../modules/snippets/resource.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";

/** Snippets as GET /snippets lists them: name, variables, the lines; deploying is done through the API for now. */
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
              <table>
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
                        <strong>{String(s.name)}</strong>
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
