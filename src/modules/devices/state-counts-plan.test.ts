import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { deviceTallyQuery, newestBackupQuery, newestDownloadQuery } from "./state-counts.ts";

/**
 * The fleet's device counts (dashboard, v2 device summary, rConfig's figures) must not grow with the devices: they
 * read every device's row, and looked up each device's last download in its jobs (bench:estate). Asserted on
 * SQLite's plans: counters kept on write, and the newest times as min/max searches of an index.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("device state counts query plans", () => {
  it("the whole fleet's counts read device_counts alone, not devices or jobs", async () => {
    const plan = await queryPlan(t.db, deviceTallyQuery(t.db, { all: true }));
    expect(plan).toMatch(/SCAN device_counts/);
    expect(plan).not.toMatch(/\bdevices\b|\bjobs\b/);
  });

  it("a scoped caller's counts read its devices' rows only, with no search of their jobs", async () => {
    const plan = await queryPlan(t.db, deviceTallyQuery(t.db, { all: false, tagIds: [1], categoryIds: [2] }));
    expect(plan).not.toMatch(/\bjobs\b/);
  });

  it("the newest backup and download are one search of their index each", async () => {
    for (const [query, index] of [
      [newestBackupQuery, "devices_last_backup_idx"],
      [newestDownloadQuery, "devices_last_download_idx"],
    ] as const) {
      const plan = await queryPlan(t.db, query(t.db, { all: true }));
      expect(plan).toBe(`SEARCH devices USING COVERING INDEX ${index}`);
    }
  });
});
