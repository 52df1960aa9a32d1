import { asc, desc } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { queryPlan } from "../../../test/helpers/query-plan.ts";
import { devices } from "../../db/schema/index.ts";
import type { ListQuery } from "../../platform/http/list.ts";
import { devicePageQuery, deviceListSpec } from "./service.ts";

/**
 * The device list's pages must not read and sort every device: at 100,000 devices a page sorted by name, or
 * filtered by status, did (bench:estate). Asserted on SQLite's plan for the query the list runs.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

const planOf = (q: Partial<ListQuery>) => queryPlan(t.db, devicePageQuery(t.db, { all: true }, { ...PAGE, ...q }));
const PAGE: ListQuery = { page: 3, perPage: 25, where: undefined, orderBy: [asc(devices.id)], fields: null };

describe("device list query plans", () => {
  it("a page sorted by name reads the name index in order instead of sorting every device", async () => {
    const plan = await planOf({ orderBy: [desc(deviceListSpec.sorts.device_name!), asc(devices.id)] });
    expect(plan).toContain("devices_name_lower_idx");
    expect(plan).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
  });

  it("a page filtered by status searches the status index", async () => {
    const plan = await planOf({ where: deviceListSpec.filters.status!.build(["unreachable"]) });
    expect(plan).toMatch(/SEARCH devices USING INDEX devices_status_idx/);
  });
});
