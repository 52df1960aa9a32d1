import { inArray } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { ApiError } from "./errors.ts";

/** List filter values that must be ids; parseListQuery turns the ApiError into a 422 under the filter's name. */
export function wholeNumbers(key: string, values: string[]): number[] {
  return values.map((v) => {
    if (!/^\d+$/.test(v)) throw new ApiError(422, `${key} values must be whole numbers; '${v}' is not`);
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
