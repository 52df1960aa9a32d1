import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { queryPlan } from "../../../../test/helpers/query-plan.ts";
import { lastRunFiguresQuery } from "./devices.ts";

/**
 * rConfig's summary figures (backup_success_last_run, ...) read each device's last finished download: grouping
 * every finished download ever run to find them grew with the history (bench:estate). Asserted on SQLite's plan.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("rConfig summary query plan", () => {
  it("searches each device's last download in its own jobs, with no pass over every job", async () => {
    const plan = await queryPlan(t.db, lastRunFiguresQuery(t.db, { all: true }));
    expect(plan).toMatch(/SEARCH j USING INDEX jobs_device_idx \(device_id=\? AND state=\?\)/);
    expect(plan).not.toMatch(/SCAN (jobs|j)\b/);
    expect(plan).not.toMatch(/GROUP BY/);
  });
});
