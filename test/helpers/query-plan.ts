import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../src/db/client.ts";

/**
 * SQLite's plan for a drizzle query (`EXPLAIN QUERY PLAN`), its steps' details one a line: what a plan test asserts
 * (an index searched, no table read whole, no temporary B-tree for an order).
 */
export async function queryPlan(db: DbOrTx, query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string> {
  const { sql: text, params } = query.toSQL();
  const rows = await db.all<{ detail: string }>(sql.raw(`explain query plan ${inline(text, params)}`));
  return rows.map((r) => r.detail).join("\n");
}

/** The statement with its parameters written in, for EXPLAIN (which drizzle's raw SQL cannot bind). */
function inline(text: string, params: unknown[]): string {
  let i = 0;
  return text.replace(/\?/g, () => {
    const p = params[i++];
    if (p instanceof Date) return String(p.getTime());
    return typeof p === "number" ? String(p) : `'${String(p).replaceAll("'", "''")}'`;
  });
}
