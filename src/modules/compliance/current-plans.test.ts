import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { complianceResults, devices } from "../../db/schema/index.ts";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import { newestBefore } from "./current.ts";
import { resultCountQuery, resultListSpec, resultPageQuery } from "./results.ts";

/**
 * `filter[latest]` and a scoped trend's starting state compared every result ever stored with its pair's others
 * (bench:estate). They read compliance_current, each pair's link to its newest result; asserted on SQLite's plans.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

const latest = (v: string) => resultListSpec.filters.latest!.build([v]);

describe("current result query plans", () => {
  it("counts filter[latest]=true over the pairs' links, each joined to its result", async () => {
    const plan = await queryPlan(t.db, resultCountQuery(t.db, latest("true")));
    console.log(plan);
  });

  it("reads a page of filter[latest]=true newest first from the links, without sorting", async () => {
    const plan = await queryPlan(
      t.db,
      resultPageQuery(t.db, latest("true"), {
        page: 1,
        perPage: 25,
        where: undefined,
        orderBy: [sql`${complianceResults.id} desc`],
        fields: null,
      }),
    );
    expect(plan).toMatch(/USING INDEX compliance_current_result_idx FOR IN-OPERATOR/);
    expect(plan).not.toMatch(/SCAN compliance_results|CORRELATED|TEMP B-TREE/);
  });

  it("finds a scoped trend's starting state per pair of the scope's devices, not over every older result", async () => {
    const scope = { all: false as const, tagIds: [1], categoryIds: [2] };
    const q = t.db
      .select({ id: complianceResults.id })
      .from(complianceResults)
      .innerJoin(devices, eq(devices.id, complianceResults.deviceId))
      .where(and(deviceScopeCondition(scope), sql`${complianceResults.evaluatedAt} < 1000`, newestBefore(1000, scope)));
    const plan = await queryPlan(t.db, q);
    expect(plan).toMatch(/SEARCH compliance_results USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(plan).toMatch(/SEARCH cc USING COVERING INDEX \S+ \(device_id=\?\)/);
    expect(plan).toMatch(
      /SEARCH r2 USING COVERING INDEX compliance_results_device_idx \(device_id=\? AND assignment_id=\? AND evaluated_at<\?\)/,
    );
    expect(plan).not.toMatch(/SCAN compliance_results/);
  });
});
