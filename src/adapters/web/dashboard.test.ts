import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebTestContext, type WebTestContext } from "../../../test/web/client.ts";
import { day, storeVersion } from "../../modules/configs/test-fixtures.ts";

/** Who may see the dashboard page, and that it shows a scoped user only their devices. */
let t: WebTestContext;
beforeAll(async () => {
  t = await createWebTestContext();
  const admin = await t.token();
  for (const [name, tags] of [
    ["page-edge-1", ["edge"]],
    ["page-core-1", []],
    ["page-core-2", []],
  ] as const) {
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: name, device_ip: "192.0.2.9", device_vendor: "Cisco", device_tags: tags },
    });
  }
});
afterAll(() => t.close());

const countsOf = (html: string) =>
  html
    .match(/<ul class="counts" id="device-counts">(.*?)<\/ul>/)![1]!
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

describe("the dashboard page", () => {
  it("sends a visitor without a session to the login form, and back after", async () => {
    const res = await t.client().get("/dashboard");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?next=%2Fdashboard");
  });

  it("shows a scoped user only the devices in scope", async () => {
    await t.role({ name: "edge-viewers", permissions: ["system.read", "devices.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-viewers" });
    await t.user({ username: "boss" });
    const scoped = t.client();
    await scoped.login("edgy");
    expect(countsOf(await (await scoped.get("/dashboard")).text())).toBe(
      "1 Devices 0 Up 0 Failing 1 Never backed up 0 Disabled",
    );
    const admin = t.client();
    await admin.login("boss");
    expect(countsOf(await (await admin.get("/dashboard")).text())).toBe(
      "3 Devices 0 Up 0 Failing 3 Never backed up 0 Disabled",
    );
  });

  it("refuses a role without system.read", async () => {
    await t.role({ name: "devices-only", permissions: ["devices.read"] });
    await t.user({ username: "narrow", role: "devices-only" });
    const browser = t.client();
    await browser.login("narrow");
    const res = await browser.get("/dashboard");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain(
      "This page needs the system.read ability; the role &#39;devices-only&#39; lacks it.",
    );
  });

  it("lists the latest changes, each linking to its diff, for a role that may read configurations", async () => {
    const [device] = (await t.call("/api/v1/devices?filter[device_name]=page-core-1", { token: await t.token() })).body
      .data;
    const first = await storeVersion(t, { deviceId: device.id, text: "hostname a\n", at: day(1) });
    const second = await storeVersion(t, { deviceId: device.id, text: "hostname b\n", at: day(2) });
    await t.user({ username: "reader", role: "viewer" });
    const browser = t.client();
    await browser.login("reader");
    const recent = (await (await browser.get("/dashboard")).text()).split('id="recent-changes"')[1]!;
    expect(recent).toContain(
      `<a href="/configs/diff?from=${first.configId}&amp;to=${second.configId}">v1 → v2 (+1 -1)</a>`,
    );
    expect(recent).toContain(`<a href="/configs/${first.configId}">v1</a>`);
  });
});
