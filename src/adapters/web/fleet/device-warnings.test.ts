import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices, jobs } from "../../../db/schema/index.ts";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";

/** What keeps a device from being backed up, said where the device is created and on its page. */
let t: WebTestContext;
let token: string;
let admin: WebClient;

beforeAll(async () => {
  t = await createWebTestContext();
  token = await t.token();
  await t.user({ username: "warn-admin" });
  admin = t.client();
  await admin.login("warn-admin");
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>) =>
  t.call("/api/v1/devices", { method: "POST", token, body: { device_ip: "192.0.2.80", ...body } });

describe("a vendor with several templates and none chosen", () => {
  it("is created with a warning naming the templates and detection, and its page says the same", async () => {
    const cisco = await create({ device_name: "warn-cisco-1", device_vendor: "Cisco" });
    expect(cisco.status).toBe(201);
    const id = cisco.body.data.id;
    expect(cisco.body.data.device_template_id).toBeNull();
    expect(cisco.body.warnings).toEqual([
      expect.stringMatching(
        /^The device has no connection template, so its backups fail: Cisco has several \(.*cisco-ios.*\); choose one with device_template_id, or POST \/api\/v1\/devices\/\d+\/detect/,
      ),
    ]);
    const page = await (await admin.get(`/devices/${id}`)).text();
    expect(page).toContain('id="template-warning"');
    expect(page).toContain(`POST /api/v1/devices/${id}/detect`);

    // A vendor with one built-in gets it, and no warning.
    const arista = await create({ device_name: "warn-arista-1", device_vendor: "Arista" });
    expect(arista.body.data.device_template_id).not.toBeNull();
    expect(arista.body).not.toHaveProperty("warnings");
    expect(await (await admin.get(`/devices/${arista.body.data.id}`)).text()).not.toContain('id="template-warning"');
  });
});

describe("a device whose host key changed", () => {
  it("is shown as failing on its host key, not up, with the same v1 reset path as the error message", async () => {
    const id = (await create({ device_name: "warn-hostkey-1", device_vendor: "Arista" })).body.data.id;
    await t.db.update(devices).set({ status: "up" }).where(eq(devices.id, id));
    const now = new Date();
    await t.db.insert(jobs).values({
      type: "download",
      deviceId: id,
      state: "finished",
      outcome: "host_key_changed",
      trigger: "schedule",
      message: `the device's SSH host key changed: POST /api/v1/devices/${id}/host-key/reset`,
      runAfter: now,
      createdAt: now,
      startedAt: now,
      finishedAt: now,
    });
    const page = await (await admin.get(`/devices/${id}`)).text();
    expect(page).toContain("host key changed</span>");
    expect(page).not.toContain('class="badge status-up"');
    const failure = page.slice(page.indexOf('id="last-failure"'));
    expect(failure.split(`POST /api/v1/devices/${id}/host-key/reset`).length - 1).toBe(2); // the message and the advice
    expect(page).not.toContain("/api/v2/devices/");
  });
});
