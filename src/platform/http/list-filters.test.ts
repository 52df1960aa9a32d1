import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { MAX_FILTER_VALUES } from "./list.ts";

/**
 * A filter's values become one bound parameter each: past SQLite's limit (32,766) the query failed and the
 * answer was a 500. Each filter takes at most MAX_FILTER_VALUES values, and says so.
 */
let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const tooMany = ids(40_000);
const limit = `at most ${MAX_FILTER_VALUES} values`;

describe("filters with many values", () => {
  it("list routes take up to the limit, and refuse more with a 422 naming the filter and the limit", async () => {
    expect(
      (await t.call(`/api/v1/devices?filter[id]=${ids(MAX_FILTER_VALUES).join(",")}`, { token: admin })).status,
    ).toBe(200);
    for (const path of [
      `/api/v1/devices?filter[id]=${tooMany.join(",")}`,
      `/api/v1/devices?filter[device_tags]=${tooMany.join(",")}`,
      `/api/v1/configs?filter[device_id]=${tooMany.join(",")}`,
    ]) {
      const res = await t.call(path, { token: admin });
      expect(res.status, path.slice(0, 40)).toBe(422);
      expect(
        Object.values(res.body.errors as Record<string, string[]>)
          .flat()
          .join(" "),
      ).toContain(limit);
    }
  });

  it("configuration search refuses more in the query string and in the body", async () => {
    const get = await t.call(`/api/v1/configs/search?q=ntp&filter[device_id]=${tooMany.join(",")}`, { token: admin });
    expect(get.status).toBe(422);
    expect(get.body.errors["filter[device_id]"][0]).toContain(limit);
    const post = await t.call("/api/v1/configs/search", {
      method: "POST",
      token: admin,
      body: { terms: ["ntp"], filter: { device_id: tooMany } },
    });
    expect(post.status).toBe(422);
    expect(JSON.stringify(post.body.errors)).toContain(limit);
  });

  it("rConfig's search parameters (ids looked up as names) are refused the same way, before any lookup", async () => {
    for (const key of ["tags", "vendors", "commands", "devices"]) {
      const post = await t.call("/api/v1/configs/search", {
        method: "POST",
        token: admin,
        body: { searchTerm: "ntp", [key]: tooMany },
      });
      expect(post.status, key).toBe(422);
      expect(JSON.stringify(post.body.errors), key).toContain(limit);
      const get = await t.call(`/api/v1/configs/search?searchTerm=ntp&${key}=${tooMany.join(",")}`, { token: admin });
      expect(get.status, key).toBe(422);
    }
  });
});
