import { desc, sql, type SQL } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { complianceResults } from "../../db/schema/index.ts";
import type { ListQuery } from "../../platform/http/list.ts";
import { changedDevicesQuery, currentResultsQuery } from "./daily.ts";
import { resultCountQuery, resultPageQuery, resultsAfterQuery } from "./results.ts";

/**
 * What the compliance list and the trends read must not grow with the history where it need not: at 20,000
 * devices x 8 nights the first page of results took 307 ms and a 30-day trend 13.5 s (bench:estate). Asserted on
 * SQLite's plan for the queries they run.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

async function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string> {
  const { sql: text, params } = query.toSQL();
  const rows = await t.db.all<{ detail: string }>(sql.raw(`explain query plan ${inline(text, params)}`));
  return rows.map((r) => r.detail).join("\n");
}

/** The statement with its parameters written in, for EXPLAIN (which drizzle's raw SQL cannot bind). */
const inline = (text: string, params: unknown[]) => {
  let i = 0;
  return text.replace(/\?/g, () => {
    const p = params[i++];
    return typeof p === "number" ? String(p) : `'${String(p).replaceAll("'", "''")}'`;
  });
};

const firstPage = (where?: SQL): ListQuery => ({
  page: 1,
  perPage: 25,
  where,
  orderBy: [desc(complianceResults.id)],
  fields: null,
});

describe("compliance query plans", () => {
  it("counts the unfiltered list on an index of its own, without joining every result to its device and policy", async () => {
    const plan = await planOf(resultCountQuery(t.db, undefined));
    expect(plan).toMatch(/SCAN compliance_results USING COVERING INDEX/);
    expect(plan).not.toMatch(/devices|policies/);
  });

  it("reads the first page of the list newest first by id, without sorting every result", async () => {
    const plan = await planOf(resultPageQuery(t.db, undefined, firstPage()));
    expect(plan).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
    expect(plan).toMatch(/SEARCH devices USING INTEGER PRIMARY KEY/);
  });

  it("reads each page of an export from the last id sent through the primary key, in id order", async () => {
    const plan = await planOf(resultsAfterQuery(t.db, undefined, 1000, 500));
    expect(plan).toMatch(/SEARCH compliance_results USING INTEGER PRIMARY KEY \(rowid>\?\)/);
    expect(plan).not.toMatch(/USE TEMP B-TREE/);
  });

  it("finds a day's changed devices through the evaluated_at index", async () => {
    const plan = await planOf(changedDevicesQuery(t.db, 1_780_000_000_000, 1_780_086_400_000));
    expect(plan).toMatch(
      /SEARCH compliance_results USING (COVERING )?INDEX compliance_results_evaluated_idx \(evaluated_at>\? AND evaluated_at<\?\)/,
    );
  });

  it("reads the changed devices' current results through the device index, for them only", async () => {
    const plan = await planOf(currentResultsQuery(t.db, [1, 2, 3], 1_780_086_400_000));
    expect(plan).toMatch(/SEARCH compliance_results USING INDEX compliance_results_device_idx \(device_id=\?\)/);
    expect(plan).toMatch(
      /SEARCH r2 USING (COVERING )?INDEX compliance_results_device_idx \(device_id=\? AND assignment_id=\? AND evaluated_at<\?\)/,
    );
    expect(plan).not.toMatch(/SCAN compliance_results/);
  });
});
