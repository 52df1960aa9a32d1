import { inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { ApiError } from "./errors.ts";

/**
 * List filter values that must be ids; parseListQuery turns the ApiError into a 422 under the filter's name.
 * At most 15 digits: every id fits, and a longer number would reach SQLite as a rounded or infinite float.
 */
export function wholeNumbers(key: string, values: string[]): number[] {
  return values.map((v) => {
    if (!/^\d{1,15}$/.test(v))
      throw new ApiError(422, `${key} values must be whole numbers of at most 15 digits; '${v.slice(0, 40)}' is not`);
    return Number(v);
  });
}

export const idFilter = (column: SQLiteColumn, name: string, describe: string) => ({
  describe,
  example: "1",
  build: (v: string[]) => inArray(column, wholeNumbers(`filter[${name}]`, v)),
});

export const booleanFilter = (column: SQLiteColumn, name: string, describe = "true or false") => ({
  describe,
  example: "true",
  build: (v: string[]) => {
    if (v.some((s) => s !== "true" && s !== "false")) throw new ApiError(422, `filter[${name}] must be true or false`);
    return inArray(
      column,
      v.map((s) => s === "true"),
    );
  },
});

/** `filter[builtin]`: true, a record shipped with netkeep (its built-in key set); false, one made by users. */
export const builtinFilter = (builtinKey: SQLiteColumn) => ({
  describe: "true: shipped with netkeep; false: made by users",
  build: (v: string[]) => {
    if (v.some((s) => s !== "true" && s !== "false")) throw new ApiError(422, "filter[builtin] must be true or false");
    if (v.includes("true") && v.includes("false")) return sql`1 = 1`;
    return v[0] === "true" ? isNotNull(builtinKey) : isNull(builtinKey);
  },
});

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2})))?$/;

/**
 * The one reader of a time a client sends: an ISO-8601 date (midnight UTC) or date-time with Z or an offset.
 * Each part must exist as written: Date.parse alone rolls 2026-02-31 over to March 3 and 24:00 to the next day.
 */
export function parseInstant(text: string): { at: Date; dateOnly: boolean } | null {
  const m = ISO_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) =>
    p === undefined ? undefined : Number(p),
  ) as number[];
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth) return null;
  if (hour > 23 || minute > 59 || second > 59 || Number(m[8] ?? 0) > 23 || Number(m[9] ?? 0) > 59) return null;
  return { at: new Date(Date.parse(text)), dateOnly: m[4] === undefined };
}

/** One ISO-8601 time for a time filter (parseInstant), and whether it was a date alone; a 422 under the filter's name otherwise. */
export function instantBound(name: string, values: string[]): { at: Date; dateOnly: boolean } {
  const key = `filter[${name}]`;
  if (values.length !== 1) throw new ApiError(422, `${key} takes one timestamp, not a list`);
  const text = values[0]!;
  const parsed = parseInstant(text);
  if (!parsed)
    throw new ApiError(
      422,
      `${key} must be an ISO-8601 time such as 2026-06-01T12:00:00Z or 2026-06-01; '${text.slice(0, 40)}' is not`,
    );
  return parsed;
}

/** One ISO-8601 instant for a time filter: a date (midnight UTC) or a date-time with Z or an offset. */
export const instantValue = (name: string, values: string[]): Date => instantBound(name, values).at;
