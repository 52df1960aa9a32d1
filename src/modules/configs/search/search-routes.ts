import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../platform/http/env.ts";
import { apiRoute, decimalNumber, jsonBody, jsonResponse, trueOrFalse } from "../../../platform/http/route.ts";
import { FieldErrorBag } from "../../../platform/http/errors.ts";
import {
  filterParams,
  listEnvelope,
  listEnvelopeSchema,
  MAX_FILTER_VALUES,
  MAX_PER_PAGE,
} from "../../../platform/http/list.ts";
import { MAX_CONTEXT, SEARCH_FILTERS, searchConfigs, type SearchRequest, type SearchResult } from "./search.ts";

const tag = "Configurations";
const DEFAULT_PER_PAGE = 25;
const DEFAULT_MAX_MATCHES = 100;

const ContextLine = z.object({ line_number: z.number().int(), line: z.string() });
const SearchHit = z
  .object({
    config_id: z.number().int(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string(),
    version: z.number().int(),
    latest: z.boolean().openapi({ description: "Whether this is the newest version of the device's command" }),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
    match_count: z
      .number()
      .int()
      .openapi({ description: "Matching lines in this configuration (matches lists at most max_matches)" }),
    matches: z.array(
      ContextLine.extend({
        terms: z.array(z.number().int()).openapi({ description: "Which terms (by position, from 0) the line matches" }),
        before: z.array(ContextLine),
        after: z.array(ContextLine),
      }),
    ),
  })
  .openapi("ConfigSearchHit");

const SearchResponse = listEnvelopeSchema(SearchHit).extend({
  search: z.object({
    index_used: z
      .boolean()
      .openapi({ description: "false when a term gave the index nothing to look up and configurations were scanned" }),
    configs_checked: z.number().int().openapi({ description: "Configurations whose text was read to confirm matches" }),
  }),
});

const term = z.string().min(1, "must not be empty").max(500, "must be at most 500 characters");

const options = {
  match: z
    .enum(["all", "any"], { error: "must be all or any" })
    .optional()
    .openapi({ description: "all (default): a configuration must match every term; any: one term is enough" }),
  context_before: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown before each match (0-${MAX_CONTEXT}; default: context)` }),
  context_after: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown after each match (0-${MAX_CONTEXT}; default: context)` }),
  context: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown before and after each match (0-${MAX_CONTEXT}, default 0)` }),
  page: decimalNumber(1, 1_000_000).optional().openapi({ description: "Page of matching configurations, from 1" }),
  per_page: decimalNumber(1, MAX_PER_PAGE)
    .optional()
    .openapi({ description: `Configurations per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})` }),
  max_matches: decimalNumber(1, 1000)
    .optional()
    .openapi({
      description: `Matching lines listed per configuration (default ${DEFAULT_MAX_MATCHES}); match_count counts them all`,
    }),
};

const SearchQuery = z.object({
  q: z
    .union([term, z.array(term).max(10, "must be at most 10 terms")], {
      // A union names no reason of its own: say which rule the value broke.
      error: (issue) =>
        issue.input === undefined
          ? "is required: the text to look for"
          : Array.isArray(issue.input)
            ? "must be at most 10 terms"
            : undefined,
    })
    .openapi({ description: "A term to look for; repeat q for several terms (at most 10)", example: "10.255.0.14" }),
  regex: trueOrFalse(
    "true: terms are regular expressions, run in RE2 (written as for JavaScript; no lookaround or backreferences) (default false: plain text)",
  ),
  case_sensitive: trueOrFalse("true: letters must match in case (default false)"),
  latest_only: trueOrFalse(
    "false: search every stored version, not only the latest of each device and command (default true)",
  ),
  perPage: decimalNumber(1, MAX_PER_PAGE).optional().openapi({ description: "Alias of per_page" }),
  ...options,
  ...Object.fromEntries(
    Object.entries(SEARCH_FILTERS).map(([name, f]) => [
      `filter[${name}]`,
      z
        .string()
        .optional()
        .openapi({ description: `${f.describe}; comma-separated values match any` }),
    ]),
  ),
});

const filterValues = z
  .array(z.union([z.string(), z.number()]).transform(String))
  .min(1, "needs at least one value")
  .max(MAX_FILTER_VALUES, `takes at most ${MAX_FILTER_VALUES} values: ask in parts`);
const SearchBody = z
  .strictObject({
    terms: z
      .array(term)
      .min(1, "needs at least one term")
      .max(10, "must be at most 10 terms")
      .openapi({ example: ["permit tcp", "10.255.0.14"] }),
    regex: z.boolean({ error: "must be true or false" }).optional().openapi({
      description:
        "true: terms are regular expressions, run in RE2 (written as for JavaScript; no lookaround or backreferences)",
    }),
    case_sensitive: z.boolean({ error: "must be true or false" }).optional(),
    latest_only: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "false: search all history (default true)" }),
    filter: z
      .strictObject(
        Object.fromEntries(
          Object.entries(SEARCH_FILTERS).map(([name, f]) => [
            name,
            filterValues.optional().openapi({ description: f.describe }),
          ]),
        ),
      )
      .optional()
      .openapi({
        description: "Filters as on GET, each a list of values that match any",
        example: { device_tags: ["core"], command: ["show running-config"] },
      }),
    ...options,
  })
  .openapi("ConfigSearchRequest");

const description =
  "Finds lines in stored configurations of devices in your scope. Terms are plain text or regular expressions, any case unless case_sensitive; " +
  "with match=all a configuration must contain every term (on any lines), with match=any one. Results are configurations (latest versions only unless " +
  "latest_only=false), ordered by device name, command and newest version first, each with its matching lines, their line numbers and context lines. " +
  "An index finds the candidates: a term needs a run of 3 or more characters that every match contains, or the search reads every configuration " +
  "in range, which is refused past 5,000 (422). A regular expression that does not compile is a 422 naming the term.";

export const searchConfigsGetRoute = apiRoute({
  method: "get",
  path: "/configs/search",
  operationId: "searchConfigs",
  tag,
  ability: "configs.read",
  summary: "Search configurations",
  description,
  request: { query: SearchQuery },
  responses: { 200: jsonResponse(SearchResponse, "A page of matching configurations") },
});

export const searchConfigsPostRoute = apiRoute({
  method: "post",
  path: "/configs/search",
  operationId: "searchConfigsPost",
  tag,
  ability: "configs.read",
  summary: "Search configurations (JSON body)",
  description: `The same search as GET /configs/search with the request as JSON, for long or many terms. ${description}`,
  request: jsonBody(SearchBody),
  responses: { 200: jsonResponse(SearchResponse, "A page of matching configurations") },
});

type Options = { [K in keyof typeof options]?: number | string };

function common(o: Options) {
  const context = Number(o.context ?? 0);
  return {
    match: (o.match ?? "all") as "all" | "any",
    contextBefore: Number(o.context_before ?? context),
    contextAfter: Number(o.context_after ?? context),
    page: Number(o.page ?? 1),
    maxMatches: Number(o.max_matches ?? DEFAULT_MAX_MATCHES),
  };
}

function respond(c: Context<AppEnv>, req: SearchRequest, result: SearchResult) {
  const q = { page: req.page, perPage: req.perPage, where: undefined, orderBy: [], fields: null };
  return {
    ...listEnvelope(c, q, result.total, result.hits),
    search: { index_used: result.indexUsed, configs_checked: result.configsChecked },
  };
}

/** A GET search's query (checked by SearchQuery) and its `filter[...]` parameters as the search request; the web's search page reads it the same way. */
export function searchRequestOfQuery(c: Context, query: z.infer<typeof SearchQuery>): SearchRequest {
  const bag = new FieldErrorBag();
  const filter: Record<string, string[]> = {};
  for (const [name, raw] of filterParams(c, bag))
    filter[name] = raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  bag.throwIfAny();
  return {
    ...common(query),
    terms: typeof query.q === "string" ? [query.q] : query.q,
    regex: query.regex === "true",
    caseSensitive: query.case_sensitive === "true",
    latestOnly: query.latest_only !== "false",
    filter,
    perPage: Number(query.per_page ?? query.perPage ?? DEFAULT_PER_PAGE),
  };
}

export function registerConfigSearchRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(searchConfigsGetRoute, async (c) => {
    const req = searchRequestOfQuery(c, c.req.valid("query"));
    const result = await searchConfigs(c.var.services.db, c.var.auth.scope, req, "q");
    return c.json(respond(c, req, result), 200);
  });

  app.openapi(searchConfigsPostRoute, async (c) => {
    const body = c.req.valid("json");
    const req: SearchRequest = {
      ...common(body),
      terms: body.terms,
      regex: body.regex ?? false,
      caseSensitive: body.case_sensitive ?? false,
      latestOnly: body.latest_only ?? true,
      filter: Object.fromEntries(Object.entries(body.filter ?? {}).filter(([, v]) => v !== undefined)) as Record<
        string,
        string[]
      >,
      perPage: Number(body.per_page ?? DEFAULT_PER_PAGE),
    };
    const result = await searchConfigs(c.var.services.db, c.var.auth.scope, req, "terms");
    return c.json(respond(c, req, result), 200);
  });
}
