import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

describe("a path only the other version serves", () => {
  it("answers 404 naming where it is, not a 422 from this version's {id} route", async () => {
    const v1 = await t.call("/api/v1/policy-compliance/export?format=json", { token });
    expect(v1).toMatchObject({
      status: 404,
      body: { success: false, message: expect.stringContaining("/api/v2/policy-compliance/export") },
    });
    expect((await t.call("/api/v1/devices/summary", { token })).status).toBe(404);
    // The route itself, and this version's own ids, answer as before.
    expect((await t.call("/api/v2/policy-compliance/export?format=json", { token })).status).toBe(200);
    expect((await t.call("/api/v1/policy-compliance/x", { token })).status).toBe(422);
  });
});
