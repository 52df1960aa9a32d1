import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

describe("smoke", () => {
  it("creates and lists", async () => {
    const created = await t.call("/api/v1/devices", { method: "POST", token: admin, body: { device_name: "core-rtr-01", device_ip: "192.0.2.1", device_vendor: "cisco", device_tags: ["core"], device_password: "hunter2" } });
    expect(created.status).toBe(201);
    console.log(created.body, created.headers.get("location"));
    const list = await t.call("/api/v1/devices?fields=id,device_name", { token: admin });
    console.log(JSON.stringify(list.body));
    const bad = await t.call("/api/v1/devices", { method: "POST", token: admin, body: { device_name: "a b", device_ip: "999.1.1.1", device_vendor: "nope" } });
    console.log(JSON.stringify(bad.body));
    const bad2 = await t.call("/api/v1/devices", { method: "POST", token: admin, rawBody: "{nope" });
    console.log(bad2.status, JSON.stringify(bad2.body));
  });
});
