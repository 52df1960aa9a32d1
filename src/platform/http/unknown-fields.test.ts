import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

const post = (path: string, body: unknown) => t.call(path, { method: "POST", token, body });

describe("a body field the route does not know", () => {
  it("is refused with a 422 naming it on device and device-profile create, and on a patch", async () => {
    const device = await post("/api/v1/devices", {
      device_name: "uf-rtr-01",
      device_ip: "192.0.2.60",
      device_vendor: "Cisco",
      device_vendr: "Juniper",
    });
    expect(device).toMatchObject({
      status: 422,
      body: {
        success: false,
        errors: {
          device_vendr: [
            expect.stringMatching(/^device_vendr is not a field of this body; the fields are: .*device_vendor/),
          ],
        },
      },
    });
    const profile = await post("/api/v1/device-profiles", { name: "uf-branch", colour: "red" });
    expect(profile).toMatchObject({
      status: 422,
      body: { errors: { colour: [expect.stringContaining("colour is not a field")] } },
    });
    const created = await post("/api/v1/devices", {
      device_name: "uf-rtr-01",
      device_ip: "192.0.2.60",
      device_vendor: "Cisco",
    });
    expect(created.status).toBe(201);
    const patch = await t.call(`/api/v1/devices/${created.body.data.id}`, {
      method: "PATCH",
      token,
      body: { notes: "x", has_password: true },
    });
    expect(patch).toMatchObject({ status: 422, body: { errors: { has_password: [expect.any(String)] } } });
  });

  it("is not one of the fields rConfig's device form sends, which stay accepted and ignored", async () => {
    const res = await post("/api/v1/devices", {
      device_name: "uf-rtr-02",
      device_ip: "192.0.2.61",
      device_vendor: [{ id: 1 }],
      device_main_prompt: "uf#",
      device_enable_prompt: "uf>",
      device_version: "17.9",
      device_added_by: "admin",
      status: 1,
      last_seen: null,
      ssh_key_id: null,
      selectedCategoryArray: [],
      device_default_creds_on: true,
    });
    expect(res.status).toBe(201);
  });
});
