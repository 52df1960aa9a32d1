import { inArray } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { ApiError } from "./errors.ts";

/**
 * List filter values that must be ids; parseListQuery turns the ApiError into a 422 under the filter's name.
 * At most 15 digits: every id fits, and a longer number would reach SQLite as a rounded or infinite float.
 */
export function wholeNumbers(key: string, values: string[]): number[] {
  return values.map((v) => {
    if (!/^\d{1,15}$/.test(v)) throw new ApiError(422, `${key} values must be whole numbers of at most 15 digits; '${v.slice(0, 40)}' is not`);
    return Number(v);
  });
}

export const idFilter = (column: SQLiteColumn, name: string, describe: string) => ({
  describe,
  build: (v: string[]) => inArray(column, wholeNumbers(`filter[${name}]`, v)),
});

export const booleanFilter = (column: SQLiteColumn, name: string, describe = "true or false") => ({
  describe,
  build: (v: string[]) => {
    if (v.some((s) => s !== "true" && s !== "false")) throw new ApiError(422, `filter[${name}] must be true or false`);
    return inArray(column, v.map((s) => s === "true"));
  },
});

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** One ISO-8601 instant for a time filter: a date (midnight UTC) or a date-time with Z or an offset. */
export function instantValue(name: string, values: string[]): Date {
  const key = `filter[${name}]`;
  if (values.length !== 1) throw new ApiError(422, `${key} takes one timestamp, not a list`);
  const text = values[0]!;
  const ms = ISO_TIME.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new ApiError(422, `${key} must be an ISO-8601 time such as 2026-06-01T12:00:00Z or 2026-06-01; '${text}' is not`);
  return new Date(ms);
}
