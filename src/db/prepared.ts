import type { Db } from "./client.ts";

/**
 * A statement built once per database and kept: `build` makes a drizzle `.prepare()`d query with placeholders.
 * drizzle builds a query's SQL on every call otherwise, 0.1-0.3 ms each, which the collector pays per job.
 */
export function preparedPerDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let statement = built.get(db);
    if (!statement) built.set(db, (statement = build(db)));
    return statement;
  };
}
