import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog } from "../../db/schema/index.ts";

let t: TestContext;
let admin: string;
let templateId: number;
let categoryId: number;
let credId: number;
let snippetCredId: number;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  templateId = (await t.call("/api/v1/templates?filter[name]=cisco-ios", { token: admin })).body.data[0].id;
  categoryId = (await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "Branch" } })).body
    .data.id;
  const cred = (name: string) =>
    t.call("/api/v1/device-credentials", {
      method: "POST",
      token: admin,
      body: { cred_name: name, cred_username: "backup", cred_password: "s3cret-pass" },
    });
  credId = (await cred("branch-login")).body.data.id;
  snippetCredId = (await cred("branch-push")).body.data.id;
});
afterAll(() => t.close());

const post = (body: Record<string, unknown>) =>
  t.call("/api/v1/device-profiles", { method: "POST", token: admin, body });

describe("device profiles", () => {
  it("creates a profile whose defaults a new device inherits, updates and deletes it", async () => {
    const created = await post({
      name: "Branch router",
      description: "ISR",
      vendor: "cisco",
      template_id: templateId,
      category_id: categoryId,
      cred_id: credId,
      snippet_cred_id: snippetCredId,
      port: 2222,
      tags: ["branch", "Core"],
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({
      name: "Branch router",
      description: "ISR",
      vendor: "Cisco",
      template_id: templateId,
      category_id: categoryId,
      cred_id: credId,
      snippet_cred_id: snippetCredId,
      port: 2222,
      tags: ["Core", "branch"],
      devices_count: 0,
    });
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/device-profiles/${id}$`));
    // Unknown tag names are created, as for devices.
    expect((await t.call("/api/v1/tags?filter[name]=branch", { token: admin })).body.data).toHaveLength(1);

    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "branch-rtr-01",
        device_ip: "192.0.2.70",
        device_vendor: "Cisco",
        device_profile_id: id,
        device_port_override: 22,
      },
    });
    expect(dev.body.data).toMatchObject({
      device_vendor: "Cisco",
      device_template_id: templateId,
      device_category_id: categoryId,
      device_cred_id: credId,
      device_snippet_cred_id: snippetCredId,
      device_port_override: 22,
      device_tags: ["Core", "branch"],
      device_profile_id: id,
    });
    expect((await t.call(`/api/v1/device-profiles/${id}`, { token: admin })).body.data.devices_count).toBe(1);

    const patched = await t.call(`/api/v1/device-profiles/${id}`, {
      method: "PATCH",
      token: admin,
      body: { port: null, tags: ["edge"] },
    });
    expect(patched.body.data).toMatchObject({ port: null, tags: ["edge"], template_id: templateId, vendor: "Cisco" });
    const put = await t.call(`/api/v1/device-profiles/${id}`, {
      method: "PUT",
      token: admin,
      body: { name: "Branch router", vendor_id: patched.body.data.vendor_id },
    });
    expect(put.body.data).toMatchObject({
      description: "",
      vendor: "Cisco",
      template_id: null,
      category_id: null,
      cred_id: null,
      snippet_cred_id: null,
      port: null,
      tags: [],
    });
    // Changing the profile leaves the device alone.
    expect((await t.call(`/api/v1/devices/${dev.body.data.id}`, { token: admin })).body.data).toMatchObject({
      device_template_id: templateId,
      device_tags: ["Core", "branch"],
    });

    const del = await t.call(`/api/v1/device-profiles/${id}`, { method: "DELETE", token: admin });
    expect(del.body.message).toBe(
      `Device profile ${id} deleted; 1 device no longer references it and keeps the values it gave`,
    );
    expect((await t.call(`/api/v1/devices/${dev.body.data.id}`, { token: admin })).body.data).toMatchObject({
      device_profile_id: null,
      device_template_id: templateId,
      device_category_id: categoryId,
    });
    const actions = (await t.db.select().from(activityLog).where(eq(activityLog.subjectId, id)))
      .filter((r) => r.subjectType === "device profile")
      .map((r) => r.action);
    expect(actions).toEqual([
      "device_profile.create",
      "device_profile.update",
      "device_profile.update",
      "device_profile.delete",
    ]);
  });

  it("checks every reference and the vendor", async () => {
    const res = await post({
      name: "Broken",
      vendor: "Acme Networks",
      template_id: 99991,
      category_id: 99992,
      cred_id: 99993,
      snippet_cred_id: 99994,
      port: 70000,
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ port: ["port must be at most 65535"] });
    const refs = await post({
      name: "Broken",
      vendor: "Acme Networks",
      template_id: 99991,
      category_id: 99992,
      cred_id: 99993,
      snippet_cred_id: 99994,
    });
    expect(Object.keys(refs.body.errors).sort()).toEqual([
      "category_id",
      "cred_id",
      "snippet_cred_id",
      "template_id",
      "vendor",
    ]);
    expect(refs.body.errors.template_id).toEqual(["template_id 99991 is not an existing template"]);
    expect(refs.body.errors.vendor[0]).toMatch(
      /^vendor 'Acme Networks' is not a known vendor; use one of: (?:.*, )?Adtran, .*Cisco/,
    );
    const juniper = (await t.call("/api/v1/vendors?filter[name]=juniper", { token: admin })).body.data[0].id;
    const disagree = await post({ name: "Broken", vendor: "Cisco", vendor_id: juniper });
    expect(disagree.body.errors.vendor_id).toEqual([
      `vendor_id ${juniper} is not the vendor named 'Cisco'; send one of them`,
    ]);
    await post({ name: "Taken" });
    expect((await post({ name: "TAKEN" })).body.errors.name).toEqual(["name 'TAKEN' is already taken"]);
  });

  it("lists with filters, search, sort and pages, and bulk deletes", async () => {
    const a = (await post({ name: "Lab A", vendor: "Juniper", template_id: templateId })).body.data;
    const b = (await post({ name: "Lab B", vendor: "Juniper" })).body.data;
    const byVendor = await t.call("/api/v1/device-profiles?filter[vendor]=JUNIPER&sort=-name", { token: admin });
    expect(byVendor.body.data.map((p: { id: number }) => p.id)).toEqual([b.id, a.id]);
    const byTemplate = await t.call(`/api/v1/device-profiles?filter[template_id]=${templateId}&fields=name`, {
      token: admin,
    });
    expect(byTemplate.body.data).toEqual([{ name: "Lab A" }]);
    const paged = await t.call("/api/v1/device-profiles?search=lab&per_page=1&page=2", { token: admin });
    expect(paged.body).toMatchObject({ data: [{ name: "Lab B" }], meta: { total: 2, current_page: 2 } });
    expect((await t.call("/api/v1/device-profiles?filter[port]=22", { token: admin })).status).toBe(422);
    const del = await t.call("/api/v1/device-profiles/bulk", {
      method: "DELETE",
      token: admin,
      body: { ids: [a.id, b.id] },
    });
    expect(del.body.message).toBe("Deleted 2 device profiles");
  });

  it("needs deviceprofiles.read / deviceprofiles.write", async () => {
    const other = await t.token(["devices.read", "devices.write"]);
    expect((await t.call("/api/v1/device-profiles", { token: other })).status).toBe(403);
    const reader = await t.token(["deviceprofiles.read"]);
    expect((await t.call("/api/v1/device-profiles", { token: reader })).status).toBe(200);
    expect(
      (await t.call("/api/v1/device-profiles", { method: "POST", token: reader, body: { name: "nope" } })).status,
    ).toBe(403);
  });
});
