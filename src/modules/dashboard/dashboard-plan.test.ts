import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { erroredDevicesQuery, latestDevicesQuery } from "./service.ts";

/**
 * The dashboard's figures must not grow with the history or the fleet: its failing devices grouped every finished
 * download ever run to find each device's last, then searched each device's jobs, and its devices added last
 * sorted every device (bench:estate). Asserted on SQLite's plans. Its counts are device_counts
 * (src/modules/devices/state-counts-plan.test.ts).
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("dashboard query plans", () => {
  it("failing devices: read from the failing devices' index, newest first, each joined to its one job", async () => {
    const plan = await queryPlan(t.db, erroredDevicesQuery(t.db, { all: true }, 10));
    expect(plan).toMatch(/SCAN devices USING INDEX devices_failing_idx/);
    expect(plan).toMatch(/SEARCH jobs USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(plan).not.toMatch(/SCAN jobs|jobs_device_idx|GROUP BY|TEMP B-TREE FOR ORDER BY/);
  });

  it("the devices added last are read from the created_at index, newest first, without sorting", async () => {
    const plan = await queryPlan(t.db, latestDevicesQuery(t.db, { all: true }, 10));
    expect(plan).toMatch(/devices_created_idx/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });
});
