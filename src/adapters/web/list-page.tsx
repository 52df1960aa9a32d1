import type { Context } from "hono";
import { listQuerySchema, parseListQuery, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import type { WebEnv } from "./env.ts";
import { routeQuery } from "./route-query.ts";
import { plural, singular } from "../../kernel/words.ts";

/**
 * What a GET form leaves in its query string that the API's list parser would refuse: empty fields (a filter
 * with no value is a 422 there). The page answers with the same address without them, so the list parser sees
 * what an API client would have sent; null when there is nothing to drop.
 */
export function withoutEmptyFields(c: Context<WebEnv>): string | null {
  const url = new URL(c.req.url);
  const kept = new URLSearchParams();
  let dropped = false;
  for (const [k, v] of url.searchParams) {
    if (v.trim() === "") dropped = true;
    else kept.append(k, v);
  }
  if (!dropped) return null;
  const query = kept.toString();
  return url.pathname + (query ? `?${query}` : "");
}

/** The page's own address with some parameters replaced (undefined removes one); page resets unless given. */
export function hrefWith(c: Context<WebEnv>, changes: Record<string, string | undefined>): string {
  const url = new URL(c.req.url);
  if (!("page" in changes)) url.searchParams.delete("page");
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  const query = url.searchParams.toString();
  return url.pathname + (query ? `?${query}` : "");
}

/** `more`: the total is not known, only that there is a next page (a search that stopped reading there). */
type Meta = {
  current_page: number;
  last_page: number;
  total: number;
  from: number | null;
  to: number | null;
  more?: boolean;
};

/** "21-40 of 312 devices" (or "1 device" when one page holds them all) with previous/next links: the list envelope's meta, as a page shows it. */
export function Pager(props: { c: Context<WebEnv>; meta: Meta; noun: string }) {
  const { meta, c } = props;
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <span>
        {meta.total === 0
          ? `No ${props.noun}`
          : meta.from === 1 && meta.to === meta.total && !meta.more
            ? plural(meta.total, singular(props.noun), props.noun)
            : `${meta.from}-${meta.to} of ${meta.more ? `more than ${meta.to}` : meta.total} ${props.noun}`}
      </span>
      {meta.current_page > 1 && (
        <a rel="prev" href={hrefWith(c, { page: String(meta.current_page - 1) })}>
          Previous
        </a>
      )}
      {meta.current_page < meta.last_page && (
        <a rel="next" href={hrefWith(c, { page: String(meta.current_page + 1) })}>
          Next
        </a>
      )}
    </nav>
  );
}

/** A column heading that sorts by `field` (ascending, then descending on a second click), as `sort=` does in the API. */
export function SortHeading(props: { c: Context<WebEnv>; field: string; label: string; current: string }) {
  const ascending = props.current === props.field;
  const descending = props.current === `-${props.field}`;
  const next = ascending ? `-${props.field}` : props.field;
  return (
    <th aria-sort={ascending ? "ascending" : descending ? "descending" : undefined}>
      <a href={hrefWith(props.c, { sort: next })}>
        {props.label}
        {ascending ? " ▲" : descending ? " ▼" : ""}
      </a>
    </th>
  );
}

/**
 * A list page's query as the API's list endpoint takes it: checked by the same query schema first (page and
 * per_page bounds: a 422 page, never a failed query), then parsed into filters and order.
 */
export function pageListQuery(c: Context<WebEnv>, spec: ListSpec): ListQuery {
  routeQuery({ request: { query: listQuerySchema(spec) } }, c.req.query());
  return parseListQuery(c, spec);
}
