import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { builtinTemplateId } from "../../../test/helpers/collector.ts";

/** A device created with a vendor and no template could never be backed up; one built-in for the vendor settles it. */
let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>) =>
  t.call("/api/v1/devices", { method: "POST", token: admin, body: { device_ip: "192.0.2.7", ...body } });

describe("a new device's default template", () => {
  it("is the vendor's built-in when the vendor has exactly one", async () => {
    const res = await create({ device_name: "eos-edge-01", device_vendor: "arista" });
    expect(res.status).toBe(201);
    expect(res.body.data.device_template_id).toBe(await builtinTemplateId(t, "arista-eos"));
  });

  it("is none when the vendor has several built-ins, or when the body names a template or sends null", async () => {
    expect(
      (await create({ device_name: "cisco-edge-01", device_vendor: "Cisco" })).body.data.device_template_id,
    ).toBeNull();
    const ios = await builtinTemplateId(t, "cisco-ios");
    expect(
      (await create({ device_name: "jnp-edge-02", device_vendor: "Juniper", device_template_id: ios })).body.data
        .device_template_id,
    ).toBe(ios);
    expect(
      (await create({ device_name: "jnp-edge-03", device_vendor: "Juniper", device_template_id: null })).body.data
        .device_template_id,
    ).toBeNull();
  });

  it("applies on create only: a device whose template is cleared keeps none", async () => {
    const id = (await create({ device_name: "jnp-edge-04", device_vendor: "Juniper" })).body.data.id;
    const cleared = await t.call(`/api/v1/devices/${id}`, {
      method: "PATCH",
      token: admin,
      body: { device_template_id: null },
    });
    expect(cleared.body.data.device_template_id).toBeNull();
    const moved = await t.call(`/api/v1/devices/${id}`, {
      method: "PUT",
      token: admin,
      body: { device_name: "jnp-edge-04", device_ip: "192.0.2.7", device_vendor: "Juniper" },
    });
    expect(moved.body.data.device_template_id).toBeNull();
  });
});
