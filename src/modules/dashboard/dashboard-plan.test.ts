import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { deviceCountsQuery, erroredDevicesQuery, latestDevicesQuery } from "./service.ts";

/**
 * The dashboard's figures must not grow with the history: its device counts and failing devices grouped every
 * finished download ever run to find each device's last, and its devices added last sorted every device
 * (bench:estate). Asserted on SQLite's plans.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("dashboard query plans", () => {
  for (const [name, query] of [
    ["device counts", () => deviceCountsQuery(t.db, { all: true })],
    ["failing devices", () => erroredDevicesQuery(t.db, { all: true }, 10)],
  ] as const) {
    it(`${name}: each device's last download is searched in its own jobs, no pass over every job`, async () => {
      const plan = await queryPlan(t.db, query());
      expect(plan).toMatch(/SEARCH j USING INDEX jobs_device_idx \(device_id=\? AND state=\?\)/);
      expect(plan).not.toMatch(/SCAN (jobs|j)\b/);
      expect(plan).not.toMatch(/GROUP BY/);
    });
  }

  it("the devices added last are read from the created_at index, newest first, without sorting", async () => {
    const plan = await queryPlan(t.db, latestDevicesQuery(t.db, { all: true }, 10));
    expect(plan).toMatch(/devices_created_idx/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });
});
