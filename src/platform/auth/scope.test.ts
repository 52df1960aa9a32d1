import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let admin: string;
let scoped: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  await t.role({ name: "ams-only", tags: ["ams"] });
  scoped = await t.token(undefined, { role: "ams-only" });
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await t.call(`/api/v1${path}`, { method: "POST", token: admin, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id as number;
  };
  ids.category = await post("/categories", { name: "shared-category" });
  ids.lonCategory = await post("/categories", { name: "lon-category" });
  ids.vendor = await post("/vendors", { name: "Scopeco" });
  const builtin = (await t.call("/api/v1/templates?per_page=1&sort=id", { token: admin })).body.data[0].id;
  ids.template = (await t.call(`/api/v1/templates/${builtin}/copy`, { method: "POST", token: admin })).body.data.id;
  ids.credential = await post("/device-credentials", {
    cred_name: "shared-cred",
    cred_username: "backup",
    cred_password: "s3cret-pass",
  });
  ids.profile = await post("/device-profiles", { name: "shared-profile" });
  ids.tag = await post("/tags", { name: "shared-tag" });
  const shared = {
    device_category_id: ids.category,
    device_vendor: "Scopeco",
    device_template_id: ids.template,
    device_cred_id: ids.credential,
    device_profile_id: ids.profile,
  };
  for (let i = 1; i <= 5; i++) {
    const site = i <= 2 ? "ams" : "lon";
    await post("/devices", {
      device_name: `${site}-rtr-${i}`,
      device_ip: `192.0.2.${i}`,
      device_tags: [site, "shared-tag"],
      ...shared,
    });
  }
  await post("/devices", {
    device_name: "lon-rtr-6",
    device_ip: "192.0.2.6",
    device_vendor: "Scopeco",
    device_category_id: ids.lonCategory,
    device_tags: ["lon"],
  });
});
afterAll(() => t.close());

const count = async (path: string, token: string) => {
  const res = await t.call(`/api/v1${path}`, { token });
  expect(res.status, path).toBe(200);
  return res.body.data.devices_count as number;
};

describe("a scoped user's counts of devices", () => {
  it("devices_count on tags, categories, vendors, templates, credentials and profiles counts only devices in the scope", async () => {
    for (const [path, all] of [
      [`/tags/${ids.tag}`, 5],
      [`/categories/${ids.category}`, 5],
      [`/vendors/${ids.vendor}`, 6],
      [`/templates/${ids.template}`, 5],
      [`/device-credentials/${ids.credential}`, 5],
      [`/device-profiles/${ids.profile}`, 5],
      [`/categories/${ids.lonCategory}`, 1],
    ] as const) {
      expect(await count(path, admin), path).toBe(all);
      expect(await count(path, scoped), path).toBe(path.endsWith(`/${ids.lonCategory}`) ? 0 : 2);
    }
    const listed = (await t.call("/api/v1/tags?filter[name]=shared-tag", { token: scoped })).body.data;
    expect(listed.map((x: { devices_count: number }) => x.devices_count)).toEqual([2]);
  });

  it("a scoped user cannot change or delete a tag, category, vendor, template, credential set or profile that devices outside the scope use (403)", async () => {
    for (const [path, what, patch] of [
      [`/tags/${ids.tag}`, `Tag ${ids.tag}`, { description: "renamed" }],
      [`/categories/${ids.category}`, `Category ${ids.category}`, { description: "renamed" }],
      [`/categories/${ids.lonCategory}`, `Category ${ids.lonCategory}`, { description: "renamed" }],
      [`/vendors/${ids.vendor}`, `Vendor ${ids.vendor}`, { name: "Scopeco Renamed" }],
      [`/templates/${ids.template}`, `Template ${ids.template}`, { description: "renamed" }],
      [`/device-credentials/${ids.credential}`, `Credential set ${ids.credential}`, { cred_name: "renamed" }],
      [`/device-profiles/${ids.profile}`, `Device profile ${ids.profile}`, { name: "renamed" }],
    ] as const) {
      const message = `${what} reaches devices outside your role's scope: only a user whose scope covers every device it reaches can create, change or delete it`;
      for (const [method, body] of [
        ["PATCH", patch],
        ["DELETE", undefined],
      ] as const) {
        const res = await t.call(`/api/v1${path}`, { method, token: scoped, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.message).toBe(message);
      }
    }
    const bulk = await t.call("/api/v1/tags/bulk", { method: "DELETE", token: scoped, body: { ids: [ids.tag] } });
    expect(bulk.status).toBe(403);
    expect(await count(`/tags/${ids.tag}`, admin)).toBe(5);
    expect((await t.call(`/api/v1/vendors/${ids.vendor}`, { token: admin })).body.data.name).toBe("Scopeco");
    // The admin's refusal while devices use the record counts them all.
    const inUse = await t.call(`/api/v1/categories/${ids.category}`, { method: "DELETE", token: admin });
    expect(inUse.body.message).toMatch(new RegExp(`^Category ${ids.category} is used by 5 devices; `));
  });

  it("a scoped user changes and deletes a record only their devices use", async () => {
    const tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "ams-extra" } })).body.data
      .id;
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "ams-rtr-7",
        device_ip: "192.0.2.7",
        device_vendor: "Scopeco",
        device_tags: ["ams", "ams-extra"],
      },
    });
    expect(
      (await t.call(`/api/v1/tags/${tag}`, { method: "PATCH", token: scoped, body: { description: "mine" } })).status,
    ).toBe(200);
    const own = await t.call(`/api/v1/tags/${tag}`, { method: "DELETE", token: scoped });
    expect(own).toMatchObject({ status: 200, body: { detail: `Tag ${tag} deleted; removed from 1 device` } });
  });

  it("a name clash with a device outside the scope says no more than that the name sent is taken", async () => {
    const hidden = (await t.call("/api/v1/devices?filter[device_name]=lon-rtr-3", { token: admin })).body.data[0];
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: scoped,
      body: { device_name: "LON-Rtr-3", device_ip: "192.0.2.9", device_vendor: "Scopeco", device_tags: ["ams"] },
    });
    expect(res.status).toBe(422);
    // One problem, naming the name as sent: not the other device's spelling, id or anything else about it.
    const message = res.body.message as string;
    expect(res.body).toEqual({ success: false, message, errors: { device_name: [message] } });
    expect(message).toMatch(/^device_name 'LON-Rtr-3' [^0-9']*$/);
    expect(hidden.device_name).toBe("lon-rtr-3");
  });
});
