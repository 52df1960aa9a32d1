import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { dayRange } from "./range.ts";
import { backupAttemptsQuery, changesPerDeviceQuery } from "./service.ts";

/**
 * The backup success report counts the range's download attempts per device: read job by job, each row with its
 * result, it took 1.1 s at 20,000 devices x 8 nights (bench:estate). Asserted on SQLite's plan: the index alone.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("backup report query plan", () => {
  it("counts the range's attempts from the finished-at index without reading the jobs' rows", async () => {
    const range = dayRange({}, new Date("2026-06-30T12:00:00Z"));
    const plan = await queryPlan(t.db, backupAttemptsQuery(t.db, { all: true }, range));
    expect(plan).toMatch(/SEARCH jobs USING COVERING INDEX jobs_finished_at_idx \(finished_at>\? AND finished_at<\?\)/);
  });
});

describe("top changers query plan", () => {
  it("counts each device's changes in the range from the created_at index without reading the changes' rows", async () => {
    const range = dayRange({}, new Date("2026-06-30T12:00:00Z"));
    const plan = await queryPlan(t.db, changesPerDeviceQuery(t.db, { all: true }, range));
    expect(plan).toMatch(
      /SEARCH config_changes USING COVERING INDEX config_changes_created_idx \(created_at>\? AND created_at<\?\)/,
    );
  });
});
