import { z } from "@hono/zod-openapi";
import { and, asc, desc, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import { ApiError, FieldErrorBag } from "./errors.ts";
import { decimalNumber } from "./route.ts";

/**
 * How one resource's list endpoint may be filtered, sorted, searched and trimmed. Each module declares one;
 * every list in the API goes through parseListQuery and listEnvelope, so they all behave alike.
 */
export type ListSpec = {
  /** The keys of the serialized record, which `fields=` may choose from. */
  fields: readonly string[];
  /** `filter[<name>]=a,b`: values are ORed. `example`: a value the filter takes, when its name does not suggest one. */
  filters: Record<string, { describe: string; build: (values: string[]) => SQL; example?: string }>;
  /** Filters whose names share a prefix, e.g. `filter[custom.site]`. */
  prefixFilter?: { prefix: string; describe: string; build: (key: string, values: string[]) => SQL };
  sorts: Record<string, SQLiteColumn | SQL>;
  defaultSort: string;
  /** The tie-breaker appended to every sort so pages never overlap. */
  idColumn: SQLiteColumn;
  search?: { describe: string; build: (term: string) => SQL };
};

export type ListQuery = {
  page: number;
  perPage: number;
  where: SQL | undefined;
  orderBy: SQL[];
  fields: string[] | null;
};

export const MAX_PER_PAGE = 500;
const DEFAULT_PER_PAGE = 25;

const positiveInt = (max?: number) => decimalNumber(1, max).optional();

/** The documented, validated part of a list query; `filter[...]` names come from the spec. */
export function listQuerySchema(spec: ListSpec) {
  const filterParams = Object.fromEntries(
    Object.entries(spec.filters).map(([name, f]) => [
      `filter[${name}]`,
      z
        .string()
        .optional()
        .openapi({
          description: `${f.describe}; comma-separated values match any`,
          ...(f.example ? { example: f.example } : {}),
        }),
    ]),
  );
  return z.object({
    page: positiveInt().openapi({ description: "Page number, from 1", example: 1 }),
    per_page: positiveInt(MAX_PER_PAGE).openapi({
      description: `Records per page (default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})`,
      example: 25,
    }),
    perPage: positiveInt(MAX_PER_PAGE).openapi({ description: "Alias of per_page", example: 25 }),
    sort: z
      .string()
      .optional()
      .openapi({
        description: `Comma-separated fields, '-' for descending; one of: ${Object.keys(spec.sorts).join(", ")}`,
        example: spec.defaultSort,
      }),
    // Where a list has no search, the parameter is left out of its description (and sending it is a 422).
    ...(spec.search
      ? {
          search: z
            .string()
            .max(200, "must be at most 200 characters")
            .optional()
            .openapi({ description: spec.search.describe }),
        }
      : {}),
    fields: z
      .string()
      .optional()
      .openapi({
        description: `Comma-separated fields to return; any of: ${spec.fields.join(", ")}`,
        example: spec.fields.slice(0, 2).join(","),
      }),
    ...filterParams,
    ...(spec.prefixFilter
      ? {
          [`filter[${spec.prefixFilter.prefix}<key>]`]: z
            .string()
            .optional()
            .openapi({ description: spec.prefixFilter.describe }),
        }
      : {}),
  });
}

const FILTER_PARAM = /^filter\[([^[\]]+)\]$/;

/**
 * Values one filter takes: each becomes a bound parameter, and far more than any caller means would pass SQLite's
 * limit (32,766) and fail the query. More is a 422 naming the filter.
 */
export const MAX_FILTER_VALUES = 1000;
export const tooManyFilterValues = (key: string) => `${key} takes at most ${MAX_FILTER_VALUES} values: ask in parts`;

/**
 * The `filter[<name>]` parameters of a query string, by name. Any other parameter named like a filter
 * (`filter=x`, `filter[]=x`, `filter[a][b]=x`, `filters[x]=y`) and a filter given twice are problems in the bag:
 * a filter the client meant but the server ignored would answer with more records than asked for.
 */
export function filterParams(c: Context, bag: FieldErrorBag): Map<string, string> {
  const filters = new Map<string, string>();
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (!/^filters?($|\[)/.test(key)) continue;
    const name = FILTER_PARAM.exec(key)?.[1];
    if (name === undefined) bag.add(key, `${key} is not a filter parameter: write filter[<name>]=<value>,<value>`);
    else if (values.length > 1)
      bag.add(key, `${key} is given ${values.length} times: give it once, with its values separated by commas`);
    else if (values[0]!.split(",").length > MAX_FILTER_VALUES) bag.add(key, tooManyFilterValues(key));
    else filters.set(name, values[0]!);
  }
  return filters;
}

const splitList = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** `sort=` as ORDER BY terms, the id last so pages never overlap; unknown names go into the bag. */
function orderOf(spec: ListSpec, sort: string, bag: FieldErrorBag): SQL[] {
  const orderBy: SQL[] = [];
  for (const part of splitList(sort)) {
    const descending = part.startsWith("-");
    const name = descending ? part.slice(1) : part;
    const column = spec.sorts[name];
    if (!column) bag.add("sort", `sort cannot use '${name}'; use any of: ${Object.keys(spec.sorts).join(", ")}`);
    else orderBy.push(descending ? desc(column) : asc(column));
  }
  orderBy.push(asc(spec.idColumn));
  return orderBy;
}

/**
 * The first `perPage` rows of a list as the API answers a query with only `sort` (the spec's default unless
 * given): for pages and services that offer a list's records as choices.
 */
export function firstPageQuery(spec: ListSpec, perPage: number, sort = spec.defaultSort): ListQuery {
  const bag = new FieldErrorBag();
  const orderBy = orderOf(spec, sort, bag);
  bag.throwIfAny();
  return { page: 1, perPage, where: undefined, orderBy, fields: null };
}

/** Reads page, sort, filters, search and fields; any unknown name is a 422 that lists the allowed ones. */
export function parseListQuery(c: Context, spec: ListSpec, extraWhere: (SQL | undefined)[] = []): ListQuery {
  const query = c.req.query();
  const bag = new FieldErrorBag();
  const conditions: (SQL | undefined)[] = [...extraWhere];

  const page = query.page ? Number(query.page) : 1;
  const perPage = Number(query.per_page ?? query.perPage ?? DEFAULT_PER_PAGE);

  for (const [name, raw] of filterParams(c, bag)) {
    const key = `filter[${name}]`;
    const values = splitList(raw);
    const known = spec.filters[name];
    const prefixed = spec.prefixFilter && name.startsWith(spec.prefixFilter.prefix) ? spec.prefixFilter : undefined;
    if (!known && !prefixed) {
      bag.add(
        key,
        `${key} is not a filter here; use one of: ${Object.keys(spec.filters).join(", ")}${spec.prefixFilter ? `, ${spec.prefixFilter.prefix}<key>` : ""}`,
      );
      continue;
    }
    if (values.length === 0) {
      bag.add(key, `${key} needs at least one value`);
      continue;
    }
    try {
      conditions.push(known ? known.build(values) : prefixed!.build(name.slice(prefixed!.prefix.length), values));
    } catch (e) {
      bag.add(key, e instanceof ApiError ? e.message : `${key} is invalid`);
    }
  }

  if (query.search !== undefined && query.search.trim() !== "") {
    if (!spec.search) bag.add("search", "search is not supported here");
    else conditions.push(spec.search.build(query.search.trim()));
  }

  const orderBy = orderOf(spec, query.sort ?? spec.defaultSort, bag);

  let fields: string[] | null = null;
  if (query.fields !== undefined) {
    fields = splitList(query.fields);
    const unknown = fields.filter((f) => !spec.fields.includes(f));
    if (unknown.length)
      bag.add(
        "fields",
        `fields has unknown name${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; use any of: ${spec.fields.join(", ")}`,
      );
    if (fields.length === 0) bag.add("fields", "fields needs at least one name");
  }

  bag.throwIfAny();
  return { page, perPage, where: and(...conditions.filter(Boolean)), orderBy, fields };
}

export const pickFields = <T extends Record<string, unknown>>(record: T, fields: string[] | null): Partial<T> =>
  fields ? (Object.fromEntries(fields.map((f) => [f, record[f]])) as Partial<T>) : record;

/** The list envelope: data, page links (absolute, without any apitoken), and totals. */
export function listEnvelope<T extends Record<string, unknown>>(c: Context, q: ListQuery, total: number, rows: T[]) {
  const lastPage = Math.max(1, Math.ceil(total / q.perPage));
  const url = new URL(c.req.url);
  url.searchParams.delete("apitoken");
  const link = (page: number) => {
    url.searchParams.set("page", String(page));
    return url.toString();
  };
  const from = rows.length ? (q.page - 1) * q.perPage + 1 : null;
  return {
    // fields= trims records on request; the declared item type stays the full record.
    data: rows.map((r) => pickFields(r, q.fields)) as T[],
    links: {
      first: link(1),
      last: link(lastPage),
      prev: q.page > 1 ? link(Math.min(q.page - 1, lastPage)) : null,
      next: q.page < lastPage ? link(q.page + 1) : null,
    },
    meta: {
      current_page: q.page,
      per_page: q.perPage,
      total,
      last_page: lastPage,
      from,
      to: from === null ? null : from + rows.length - 1,
    },
  };
}

export const listEnvelopeSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    links: z.object({ first: z.string(), last: z.string(), prev: z.string().nullable(), next: z.string().nullable() }),
    meta: z.object({
      current_page: z.number().int(),
      per_page: z.number().int(),
      total: z.number().int(),
      last_page: z.number().int(),
      from: z.number().int().nullable(),
      to: z.number().int().nullable(),
    }),
  });

/** Case-insensitive substring match with the user's % and _ taken literally. */
export const containsText = (expr: SQLWrapper, term: string): SQL =>
  sql`${expr} LIKE ${`%${term.replace(/[\\%_]/g, (m) => "\\" + m)}%`} ESCAPE '\\'`;
