import { asc, desc } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { queryPlan } from "../../../../test/helpers/query-plan.ts";
import { configChanges } from "../../../db/schema/index.ts";
import type { ListQuery } from "../../../platform/http/list.ts";
import { changeCountQuery, changeListSpec } from "./changes.ts";

/**
 * The changes list counts its matches for `meta.total`: joined with devices, that looked up every matching change's
 * device (a week's changes at 20,000 devices: 32x the time at 2,000, bench:estate). Asserted on SQLite's plan.
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

const sinceLastWeek = (extra: Partial<ListQuery> = {}): ListQuery => ({
  page: 1,
  perPage: 25,
  where: changeListSpec.filters.date_from!.build(["2026-01-01"]),
  orderBy: [desc(configChanges.createdAt), asc(configChanges.id)],
  fields: null,
  ...extra,
});

describe("changes list count plan", () => {
  it("counts the changes since a date on the created_at index alone, without reading devices", async () => {
    const plan = await queryPlan(t.db, changeCountQuery(t.db, { all: true }, sinceLastWeek()));
    expect(plan).toMatch(/SEARCH config_changes USING (COVERING )?INDEX config_changes_created_idx/);
    expect(plan).not.toMatch(/devices/);
  });

  it("reads devices only for a filter on them, through their index", async () => {
    const plan = await queryPlan(
      t.db,
      changeCountQuery(
        t.db,
        { all: true },
        sinceLastWeek({ where: changeListSpec.filters.device_name!.build(["r1"]) }),
      ),
    );
    expect(plan).toMatch(/SEARCH devices USING (COVERING )?INDEX devices_name_key_unique/);
    expect(plan).not.toMatch(/SCAN devices/);
  });
});
