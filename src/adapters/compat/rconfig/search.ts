/**
 * Configuration search with rConfig's parameters (its v1 ConfigsController::search and the newer search form's
 * fields), rewritten into netkeep's before validation; each hit gains rConfig's fields beside netkeep's.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { commands, tags, vendors } from "../../../db/schema/index.ts";
import { MAX_FILTER_VALUES, MAX_PER_PAGE } from "../../../platform/http/list.ts";
import { configFileName } from "../../../modules/configs/index.ts";
import { jsonObjectBody, replaceJsonBody, replaceQuery, succeeded, type CompatHook } from "./hook.ts";
import { extendData, SuccessFields } from "./envelope.ts";

/** The parameters that mark a request as rConfig's: netkeep's own search sends q (GET) or terms (POST). */
const TERM_KEYS = ["searchTerm", "search_term", "criteria"];
const RCONFIG_KEYS = [
  ...TERM_KEYS,
  "devices",
  "categories",
  "tags",
  "vendors",
  "commands",
  "limit",
  "lines_before",
  "lines_after",
  "latest_version_only",
  "case_sensitive",
  "criteria_mode",
  "results_per_config",
  "dateFrom",
  "dateTo",
  "from_date",
  "to_date",
];

/** rConfig's request, read alike from a query string (`devices[]=1`, `devices=1,2`) or a JSON body. */
type Raw = Record<string, unknown>;

const list = (v: unknown): unknown[] =>
  v === undefined || v === null || v === ""
    ? []
    : (Array.isArray(v) ? v : typeof v === "string" ? v.split(",") : [v])
        .map((x) =>
          x && typeof x === "object" && "id" in x ? (x as { id: unknown }).id : typeof x === "string" ? x.trim() : x,
        )
        .filter((x) => x !== "" && x !== null && x !== undefined);
const isId = (v: unknown) =>
  (typeof v === "number" && Number.isInteger(v)) || (typeof v === "string" && /^\d{1,15}$/.test(v));
const flag = (v: unknown) =>
  v === undefined ? undefined : v === true || v === 1 || v === "1" || v === "true" || v === "on";
const whole = (v: unknown) => (isId(v) ? Number(v) : undefined);

/** Ids become the names netkeep's filters take; names pass as they are. A list past the filters' limit is left for the validator to refuse. */
async function namesOf(db: DbOrTx, table: typeof tags | typeof vendors, values: unknown[]): Promise<string[]> {
  if (values.length > MAX_FILTER_VALUES) return values.map(String);
  const ids = values.filter(isId).map(Number);
  const rows = ids.length
    ? await db.select({ id: table.id, name: table.name }).from(table).where(inArray(table.id, ids))
    : [];
  const names = new Map(rows.map((r) => [r.id, r.name]));
  // An id that names nothing matches nothing: it stays as its digits, which no name of a list's ids has.
  return values.map((v) => (isId(v) ? (names.get(Number(v)) ?? `#${v}`) : String(v)));
}

async function commandTexts(db: DbOrTx, values: unknown[]): Promise<string[]> {
  if (values.length > MAX_FILTER_VALUES) return values.map(String);
  const ids = values.filter(isId).map(Number);
  const rows = ids.length
    ? await db.select({ command: commands.command }).from(commands).where(inArray(commands.id, ids))
    : [];
  return [...new Set([...values.filter((v) => !isId(v)).map(String), ...rows.map((r) => r.command)])];
}

const criterionTerm = (c: unknown) =>
  typeof c === "string"
    ? c
    : c && typeof c === "object"
      ? ["term", "searchTerm", "search_term", "value"].map((k) => (c as Raw)[k]).find((v) => typeof v === "string")
      : undefined;

/** netkeep's search request (as the POST body has it) from rConfig's parameters. */
export async function searchRequest(db: DbOrTx, raw: Raw) {
  const terms = [raw.searchTerm ?? raw.search_term, ...list(raw.criteria).map(criterionTerm)].filter(
    (t): t is string => typeof t === "string" && t !== "",
  );
  const filter: Record<string, string[]> = {};
  const put = (name: string, values: string[]) => {
    if (values.length) filter[name] = values;
  };
  put("device_id", list(raw.devices).map(String));
  put("device_category_id", list(raw.categories).map(String));
  put("device_tags", await namesOf(db, tags, list(raw.tags)));
  put("device_vendor", await namesOf(db, vendors, list(raw.vendors)));
  if (list(raw.commands).length) filter.command = await commandTexts(db, list(raw.commands));
  if (filter.command?.length === 0) filter.command = ["\u0000no such command"]; // rConfig: unknown command ids find nothing
  put("date_from", list(raw.dateFrom ?? raw.from_date).map(String));
  put("date_to", list(raw.dateTo ?? raw.to_date).map(String));
  const mode = typeof raw.criteria_mode === "string" ? raw.criteria_mode.toLowerCase() : undefined;
  const limit = whole(raw.limit);
  return {
    terms,
    ...(Object.keys(filter).length ? { filter } : {}),
    case_sensitive: flag(raw.case_sensitive) ?? false,
    // rConfig searches every stored version unless told otherwise.
    latest_only: flag(raw.latest_version_only) ?? false,
    ...(mode ? { match: mode === "or" || mode === "any" ? "any" : "all" } : {}),
    ...(raw.lines_before !== undefined ? { context_before: whole(raw.lines_before) ?? raw.lines_before } : {}),
    ...(raw.lines_after !== undefined ? { context_after: whole(raw.lines_after) ?? raw.lines_after } : {}),
    ...(limit !== undefined
      ? { per_page: Math.min(Math.max(limit, 1), MAX_PER_PAGE) }
      : raw.limit !== undefined
        ? { per_page: raw.limit }
        : {}),
    ...(raw.results_per_config !== undefined
      ? { max_matches: whole(raw.results_per_config) ?? raw.results_per_config }
      : {}),
  };
}

/** The requests (by their context) that came in rConfig's shape: only their hits get rConfig's fields. */
const rconfigRequests = new WeakSet<Context>();

/** `devices[]`, `criteria[0][term]` -> `devices`, `criteria`. */
const baseName = (key: string) => key.replace(/\[.*$/, "");
const isRconfig = (keys: Iterable<string>) => [...keys].some((k) => TERM_KEYS.includes(baseName(k)));

/** A query string as rConfig's (PHP) clients write it: `devices[]=1&devices[]=2`, `devices=1,2`, `criteria[0][term]=x`. */
function queryObject(params: URLSearchParams): Raw {
  const out: Raw = {};
  for (const key of new Set(params.keys())) {
    const item = /^(\w+)\[(\d+)\]\[(\w+)\]$/.exec(key);
    if (item) {
      const list = (Array.isArray(out[item[1]!]) ? out[item[1]!] : (out[item[1]!] = [])) as Raw[];
      (list[Number(item[2])] ??= {})[item[3]!] = params.get(key);
    } else out[baseName(key)] = key.endsWith("[]") ? params.getAll(key) : params.get(key);
  }
  for (const [name, value] of Object.entries(out))
    if (Array.isArray(value)) out[name] = value.filter((v) => v !== undefined);
  return out;
}

const searchGet: CompatHook["request"] = async (c) => {
  const params = new URL(c.req.url).searchParams;
  if (!isRconfig(params.keys())) return;
  rconfigRequests.add(c);
  const req = await searchRequest(c.var.services.db, queryObject(params));
  const out = new URLSearchParams();
  for (const [key, value] of params) if (!RCONFIG_KEYS.includes(baseName(key))) out.append(key, value);
  for (const term of req.terms) out.append("q", term);
  for (const [name, values] of Object.entries(req.filter ?? {})) out.set(`filter[${name}]`, values.join(","));
  out.set("case_sensitive", String(req.case_sensitive));
  out.set("latest_only", String(req.latest_only));
  for (const key of ["match", "context_before", "context_after", "per_page", "max_matches"] as const) {
    if (req[key] !== undefined) out.set(key, String(req[key]));
  }
  replaceQuery(c, out);
};

const searchPost: CompatHook["request"] = async (c) => {
  const body = await jsonObjectBody(c);
  if (!body || !isRconfig(Object.keys(body))) return;
  rconfigRequests.add(c);
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !RCONFIG_KEYS.includes(k)));
  replaceJsonBody(c, { ...rest, ...(await searchRequest(c.var.services.db, body)) });
};

// ---- answers ----------------------------------------------------------------------------------------------------

type Line = { line_number: number; line: string };
type Hit = {
  config_id: number;
  device_id: number;
  device_name: string;
  command: string;
  version: number;
  last_seen_at: string;
  matches: (Line & { before: Line[]; after: Line[] })[];
};

const decorateHits = (hits: Hit[]) =>
  hits.map((h) => ({
    ...h,
    id: h.config_id,
    config_command: h.command,
    config_date: h.last_seen_at.slice(0, 10),
    config_filename: configFileName(h.device_name, h.command, h.version),
    device: { id: h.device_id, device_name: h.device_name },
    matches: h.matches.map((m) => ({
      ...m,
      line_text: m.line,
      context: [...m.before, m, ...m.after].map((l) => l.line),
    })),
  }));

const WITH_RCONFIG = "Present when the request used rConfig's parameters";
const HitFields = (hit: z.ZodObject<z.ZodRawShape>) => ({
  id: z
    .number()
    .int()
    .optional()
    .openapi({ description: `rConfig's name for config_id. ${WITH_RCONFIG}` }),
  config_command: z.string().optional().openapi({ description: WITH_RCONFIG }),
  config_date: z
    .string()
    .optional()
    .openapi({ description: `The date (UTC) a download last got this version. ${WITH_RCONFIG}` }),
  config_filename: z.string().optional().openapi({ description: WITH_RCONFIG }),
  device: z.object({ id: z.number().int(), device_name: z.string() }).optional().openapi({ description: WITH_RCONFIG }),
  matches: z.array(
    (hit.shape.matches as z.ZodArray<z.ZodObject<z.ZodRawShape>>).element.extend({
      line_text: z
        .string()
        .optional()
        .openapi({ description: `rConfig's name for line. ${WITH_RCONFIG}` }),
      context: z
        .array(z.string())
        .optional()
        .openapi({ description: `rConfig's context: the lines before, the line, the lines after. ${WITH_RCONFIG}` }),
    }),
  ),
});

const searchAnswer = async (c: Context, body: Record<string, unknown>) => ({
  body: succeeded(
    rconfigRequests.has(c) ? { ...body, data: decorateHits(body.data as Hit[]) } : body,
    "Search results",
  ),
});

const NOTE =
  "rConfig's parameters are accepted too (searchTerm or search_term, criteria[], criteria_mode, devices, categories, tags, vendors, " +
  "commands, limit, lines_before, lines_after, latest_version_only, case_sensitive, results_per_config, dateFrom/dateTo); with them, every stored " +
  "version is searched unless latest_version_only, and each hit also carries rConfig's id, config_command, config_date, config_filename, device, and per match line_text and context.";

export const searchHooks: Record<string, CompatHook> = {
  searchConfigs: {
    request: searchGet,
    response: searchAnswer,
    document: (r) => extendData(r, HitFields, false, SuccessFields),
    note: NOTE,
  },
  searchConfigsPost: {
    request: searchPost,
    response: searchAnswer,
    document: (r) => extendData(r, HitFields, false, SuccessFields),
    note: NOTE,
  },
};
