import type { Context, Hono } from "hono";
import { searchConfigs } from "../../../modules/configs/index.ts";
import { searchConfigsGetRoute, searchRequestOfQuery } from "../../../modules/configs/index.ts";
import type { SearchRequest } from "../../../modules/configs/index.ts";
import { compileUserPattern } from "../../../kernel/patterns/user-pattern.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields } from "../list-page.tsx";
import { routeQuery } from "../route-query.ts";
import { requirePage } from "../viewer.ts";

/** The query as the API's validator sees it: a parameter given once is a string, given again a list. */
function queryOf(c: Context<WebEnv>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
}

type Marker = (line: string) => [number, number][];

/**
 * Where each term matches in a line, to mark it: every occurrence of a plain term; a regular expression's first
 * match (run in RE2 like the search; a later match is not looked for, since cutting the line would change what
 * ^ and lookarounds of position mean).
 */
function markers(req: SearchRequest): Marker[] {
  return req.terms.map((term): Marker => {
    if (req.regex) {
      const pattern = compileUserPattern(term, { ignoreCase: !req.caseSensitive });
      return (line) => {
        const m = pattern.exec(line);
        return m && m[0].length ? [[m.index, m.index + m[0].length]] : [];
      };
    }
    const needle = req.caseSensitive ? term : term.toLowerCase();
    return (line) => {
      const hay = req.caseSensitive ? line : line.toLowerCase();
      const spans: [number, number][] = [];
      for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length))
        spans.push([at, at + needle.length]);
      return spans;
    };
  });
}

function Marked(props: { line: string; markers: Marker[] }) {
  const spans = props.markers.flatMap((m) => m(props.line)).sort((a, b) => a[0] - b[0]);
  const parts: unknown[] = [];
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    const from = Math.max(start, at);
    if (from > at) parts.push(props.line.slice(at, from));
    parts.push(<mark>{props.line.slice(from, end)}</mark>);
    at = end;
  }
  parts.push(props.line.slice(at));
  return <>{parts}</>;
}

const CONTEXT_CHOICES = ["0", "1", "2", "3", "5", "10"];

/**
 * Configuration search: GET /configs/search's options (terms, regex, case, all history, match all/any, context,
 * filters) as a form, checked by the API's own query schema, run by its service in the user's scope.
 */
export function registerSearchPage(web: Hono<WebEnv>): void {
  web.get("/search", requirePage("configs.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const input = queryOf(c);
    const terms = ([] as string[]).concat(input.q ?? []);
    const one = (name: string) => (typeof input[name] === "string" ? (input[name] as string) : "");
    let results = null;
    let req: SearchRequest | null = null;
    if (terms.length) {
      req = searchRequestOfQuery(c, routeQuery(searchConfigsGetRoute, { context: "2", ...input }));
      results = await searchConfigs(c.var.services.db, c.var.auth.scope, req, "q", { untilNextPage: true });
    }
    const marks = req ? markers(req) : [];
    const Check = (p: { name: string; label: string; checked: boolean; value?: string }) => (
      <label class="check">
        <input type="checkbox" name={p.name} value={p.value ?? "true"} checked={p.checked} /> {p.label}
      </label>
    );
    return renderPage(c, 200, {
      title: "Search configurations",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Search configurations</h1>
          <form method="get" action="/search" class="filters" role="search">
            <div class="field grow">
              <label for="search-q">Text to find</label>
              <input type="search" id="search-q" name="q" value={terms[0] ?? ""} required />
            </div>
            {terms.slice(1).map((t, i) => (
              <div class="field grow">
                <label for={`search-q${i + 2}`}>{`Also (term ${i + 2})`}</label>
                <input type="search" id={`search-q${i + 2}`} name="q" value={t} />
              </div>
            ))}
            <div class="field">
              <label for="search-match">Terms</label>
              <select id="search-match" name="match">
                <option value="all" selected={one("match") !== "any"}>
                  All must match
                </option>
                <option value="any" selected={one("match") === "any"}>
                  Any may match
                </option>
              </select>
            </div>
            <div class="field">
              <label for="search-context">Context lines</label>
              <select id="search-context" name="context">
                {CONTEXT_CHOICES.map((n) => (
                  <option value={n} selected={(one("context") || "2") === n}>
                    {n}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="search-tag">Device tag</label>
              <input type="search" id="search-tag" name="filter[device_tags]" value={one("filter[device_tags]")} />
            </div>
            <div class="field">
              <label for="search-command">Command</label>
              <input
                type="search"
                id="search-command"
                name="filter[command]"
                value={one("filter[command]")}
                placeholder="show running-config"
              />
            </div>
            <fieldset class="field checks">
              <legend class="visually-hidden">Options</legend>
              <Check name="regex" label="Regular expression" checked={one("regex") === "true"} />
              <Check name="case_sensitive" label="Match case" checked={one("case_sensitive") === "true"} />
              <Check name="latest_only" value="false" label="All versions" checked={one("latest_only") === "false"} />
            </fieldset>
            <div class="field">
              <button type="submit">Search</button>
            </div>
          </form>
          {results && req && (
            <>
              <Pager
                c={c}
                meta={{
                  current_page: req.page,
                  last_page: Math.max(1, Math.ceil(results.total / req.perPage)),
                  total: results.total,
                  more: !results.complete,
                  from: results.hits.length ? (req.page - 1) * req.perPage + 1 : null,
                  to: results.hits.length ? (req.page - 1) * req.perPage + results.hits.length : null,
                }}
                noun="configurations"
              />
              {results.hits.map((hit) => (
                <article class="search-hit">
                  <h2>
                    <a href={`/devices/${hit.device_id}`}>{hit.device_name}</a> · <code>{hit.command}</code> ·{" "}
                    <a href={`/configs/${hit.config_id}`}>{`v${hit.version}`}</a>
                    {hit.latest && <span class="badge ok">latest</span>}
                  </h2>
                  <p class="muted">
                    {`${hit.match_count} matching line${hit.match_count === 1 ? "" : "s"}, last seen `}
                    <Time at={new Date(hit.last_seen_at)} none="" />
                  </p>
                  <pre class="matches">
                    {hit.matches.map((m) => (
                      <>
                        {m.before.map((l) => (
                          <span class="ctx-line">
                            <span class="n">{l.line_number}</span>
                            {l.line}
                            {"\n"}
                          </span>
                        ))}
                        <a class="hit-line" href={`/configs/${hit.config_id}#L${m.line_number}`}>
                          <span class="n">{m.line_number}</span>
                          <Marked line={m.line} markers={marks} />
                          {"\n"}
                        </a>
                        {m.after.map((l) => (
                          <span class="ctx-line">
                            <span class="n">{l.line_number}</span>
                            {l.line}
                            {"\n"}
                          </span>
                        ))}
                        <span class="sep">{"\n"}</span>
                      </>
                    ))}
                  </pre>
                </article>
              ))}
            </>
          )}
        </section>
      ),
    });
  });
}
