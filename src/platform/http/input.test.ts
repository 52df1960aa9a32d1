import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { parseInstant } from "./filters.ts";

let t: TestContext;
let token: string;
let tagId: number;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  // Enough tags that id 16 exists, as in the report where DELETE /tags/0x10 deleted tag 16.
  for (let i = 1; i <= 16; i++) {
    const res = await t.call("/api/v1/tags", { method: "POST", token, body: { name: `input-tag-${i}` } });
    tagId = res.body.data.id;
  }
});
afterAll(() => t.close());

describe("path ids", () => {
  it("are decimal digits only: anything Number() would also read is a 422 naming the parameter, and nothing is touched", async () => {
    expect(tagId).toBe(16);
    for (const id of ["0x10", "1.6e1", "+16", "0b10000", "%2016", "16%20", "16.0", "0", "-16", "1234567890123456"]) {
      const res = await t.call(`/api/v1/tags/${id}`, { method: "DELETE", token });
      expect(res.status, `DELETE /tags/${id}`).toBe(422);
      expect(Object.keys(res.body.errors), id).toEqual(["id"]);
    }
    expect((await t.call("/api/v1/tags/16", { token })).status, "tag 16 is still there").toBe(200);
    expect((await t.call("/api/v1/tags/x", { token })).body.message).toBe("id must be a whole number");
  });

  it("read the same in query numbers (page, per_page)", async () => {
    for (const query of ["page=0x2", "per_page=1e1", "perPage=+5"]) {
      const res = await t.call(`/api/v1/tags?${query}`, { token });
      expect(res.status, query).toBe(422);
    }
    expect((await t.call("/api/v1/tags?page=2&per_page=5", { token })).body.meta).toMatchObject({
      current_page: 2,
      per_page: 5,
    });
  });
});

describe("filter parameters", () => {
  it("that are malformed are a 422 naming the parameter, not ignored", async () => {
    for (const query of [
      "filter=x",
      "filter[]=x",
      "filter[name][x]=y",
      "filters[name]=x",
      "filter[name]=a&filter[name]=b",
    ]) {
      const res = await t.call(`/api/v1/tags?${query}`, { token });
      expect(res.status, query).toBe(422);
      expect(res.body.message, query).toMatch(/^filter/);
    }
    const search = await t.call("/api/v1/configs/search?q=hostname&filter[]=x", { token });
    expect(search.status, "config search reads filters the same way").toBe(422);
  });

  it("that are well formed still filter", async () => {
    const res = await t.call("/api/v1/tags?filter[name]=input-tag-3,input-tag-4", { token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((tag: { name: string }) => tag.name).sort()).toEqual(["input-tag-3", "input-tag-4"]);
  });
});

describe("dates", () => {
  it("that do not exist are refused by every time filter alike", async () => {
    const filters = [
      "/api/v1/configs?filter[date_from]=",
      "/api/v1/configs?filter[date_to]=",
      "/api/v1/activity-logs?filter[created_after]=",
      "/api/v1/task-runs?filter[started_before]=",
      "/api/v1/configs/search?q=hostname&filter[date_from]=",
    ];
    for (const value of [
      "2026-02-31",
      "2026-04-31",
      "2026-02-29T10:00:00Z",
      "2026-06-01T24:00Z",
      "2026-06-01T12:60Z",
      "2026-06-01T12:00+24:00",
    ]) {
      for (const filter of filters) {
        const res = await t.call(filter + value, { token });
        expect(res.status, filter + value).toBe(422);
        expect(res.body.message, filter + value).toContain(
          "must be an ISO-8601 time such as 2026-06-01T12:00:00Z or 2026-06-01",
        );
      }
    }
    for (const filter of filters)
      expect((await t.call(filter + "2028-02-29", { token })).status, `${filter}, a leap day`).toBe(200);
  });

  it("are read as written, with an offset", () => {
    expect(parseInstant("2026-06-01")).toEqual({ at: new Date("2026-06-01T00:00:00Z"), dateOnly: true });
    expect(parseInstant("2026-06-01T14:30:00+02:00")).toEqual({
      at: new Date("2026-06-01T12:30:00Z"),
      dateOnly: false,
    });
    expect(parseInstant("2026-12-31T23:59:59.999Z")?.at.toISOString()).toBe("2026-12-31T23:59:59.999Z");
    expect(parseInstant("June 1, 2026")).toBeNull();
  });
});
