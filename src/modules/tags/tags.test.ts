import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, deviceProfiles } from "../../db/schema/index.ts";
import { eq } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

describe("tags", () => {
  it("creates, shows, lists, updates and deletes", async () => {
    const created = await t.call("/api/v1/tags", {
      method: "POST",
      token: admin,
      body: { name: "core", color: "#1f6feb", description: "Core routers" },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: "core",
      color: "#1f6feb",
      description: "Core routers",
      devices_count: 0,
    });
    const id = created.body.data.id;
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/tags/${id}$`));

    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "tagged-01", device_ip: "192.0.2.1", device_vendor: "Cisco", device_tags: ["core"] },
    });
    expect((await t.call(`/api/v1/tags/${id}`, { token: admin })).body.data.devices_count).toBe(1);

    const patched = await t.call(`/api/v1/tags/${id}`, {
      method: "PATCH",
      token: admin,
      body: { description: "changed" },
    });
    expect(patched.body.data).toMatchObject({ name: "core", color: "#1f6feb", description: "changed" });
    const put = await t.call(`/api/v1/tags/${id}`, { method: "PUT", token: admin, body: { name: "core" } });
    expect(put.body.data).toMatchObject({ color: "#6b7280", description: "" });

    const list = await t.call("/api/v1/tags?filter[name]=CORE", { token: admin });
    expect(list.body.data.map((x: { id: number }) => x.id)).toEqual([id]);

    const del = await t.call(`/api/v1/tags/${id}`, { method: "DELETE", token: admin });
    expect(del).toMatchObject({
      status: 200,
      body: { message: "Tag deleted successfully!", detail: `Tag ${id} deleted; removed from 1 device` },
    });
    const dev = await t.call("/api/v1/devices?filter[device_name]=tagged-01", { token: admin });
    expect(dev.body.data[0].device_tags).toEqual([]);
    const actions = (await t.db.select().from(activityLog).where(eq(activityLog.subjectType, "tag"))).map(
      (r) => r.action,
    );
    expect(actions).toEqual(["tag.create", "tag.update", "tag.update", "tag.delete"]);
  });

  it("validates name uniqueness (any case) and colour", async () => {
    await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "Edge" } });
    const dup = await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "edge" } });
    expect(dup.status).toBe(422);
    expect(dup.body.errors.name[0]).toMatch(/already taken/);
    const colour = await t.call("/api/v1/tags", {
      method: "POST",
      token: admin,
      body: { name: "blue", color: "blue" },
    });
    expect(colour.body.errors.color[0]).toMatch(/#1f6feb/);
  });

  it("refuses to delete a tag a role's scope names, and detaches it from profiles", async () => {
    await t.role({ name: "ams-team", tags: ["ams"] });
    const ams = (await t.call("/api/v1/tags?filter[name]=ams", { token: admin })).body.data[0];
    const res = await t.call(`/api/v1/tags/${ams.id}`, { method: "DELETE", token: admin });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/'ams-team'/);

    const lab = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "lab" } })).body.data;
    const now = new Date();
    const [profile] = await t.db
      .insert(deviceProfiles)
      .values({
        name: "Lab profile",
        nameKey: nameKey("Lab profile"),
        tagIds: [lab.id],
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const del = await t.call(`/api/v1/tags/${lab.id}`, { method: "DELETE", token: admin });
    expect(del.body.detail).toBe(`Tag ${lab.id} deleted; removed from 1 device profile`);
    const [after] = await t.db.select().from(deviceProfiles).where(eq(deviceProfiles.id, profile!.id));
    expect(after!.tagIds).toEqual([]);
  });

  it("bulk deletes all or nothing", async () => {
    const a = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "bulk-a" } })).body.data.id;
    const b = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "bulk-b" } })).body.data.id;
    const bad = await t.call("/api/v1/tags/bulk", { method: "DELETE", token: admin, body: { ids: [a, 99999] } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(["ids.1"]);
    expect((await t.call(`/api/v1/tags/${a}`, { token: admin })).status).toBe(200);
    const ok = await t.call("/api/v1/tags/bulk", { method: "DELETE", token: admin, body: { ids: [a, b] } });
    expect(ok.body.message).toBe("Deleted 2 tags");
  });

  it("needs tags.read / tags.write", async () => {
    const devicesOnly = await t.token(["devices.read", "devices.write"]);
    expect((await t.call("/api/v1/tags", { token: devicesOnly })).status).toBe(403);
    const reader = await t.token(["tags.read"]);
    expect((await t.call("/api/v1/tags", { token: reader })).status).toBe(200);
    expect((await t.call("/api/v1/tags", { method: "POST", token: reader, body: { name: "nope" } })).status).toBe(403);
  });
});
