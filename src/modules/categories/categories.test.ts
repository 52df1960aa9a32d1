import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  iosScript,
  latestConfigs,
} from "../../../test/helpers/collector.ts";
import { startFakeDevice } from "../../../test/helpers/fake-device.ts";
import { deviceProfiles } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const category = async (name: string) =>
  (await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name } })).body.data;
const command = async (text: string, categoryIds: number[]) =>
  (
    await t.call("/api/v1/commands", {
      method: "POST",
      token: admin,
      body: { command: text, category_ids: categoryIds },
    })
  ).body.data;

describe("categories", () => {
  it("has the seeded Default category", async () => {
    const res = await t.call("/api/v1/categories", { token: admin });
    expect(res.body.data).toMatchObject([
      { name: "Default", description: "Running configuration", commands: [], devices_count: 0 },
    ]);
  });

  it("creates, shows with its commands, updates and deletes", async () => {
    const created = await t.call("/api/v1/categories", {
      method: "POST",
      token: admin,
      body: { name: "Routers", description: "WAN routers" },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/categories/${id}$`));
    const run = await command("show running-config", [id]);
    const ver = await command("show version", [id]);
    expect((await t.call(`/api/v1/categories/${id}`, { token: admin })).body.data).toMatchObject({
      name: "Routers",
      description: "WAN routers",
      commands: [
        { id: run.id, command: "show running-config" },
        { id: ver.id, command: "show version" },
      ],
    });
    const put = await t.call(`/api/v1/categories/${id}`, {
      method: "PUT",
      token: admin,
      body: { name: "Core routers" },
    });
    expect(put.body.data).toMatchObject({ name: "Core routers", description: "" });
    const patch = await t.call(`/api/v1/categories/${id}`, {
      method: "PATCH",
      token: admin,
      body: { description: "again" },
    });
    expect(patch.body.data).toMatchObject({ name: "Core routers", description: "again" });

    const del = await t.call(`/api/v1/categories/${id}`, { method: "DELETE", token: admin });
    expect(del.body.detail).toBe(
      `Category ${id} deleted; unlinked from 2 commands (now in no category, so never run until added to one: commands ${run.id}, ${ver.id})`,
    );
    const orphans = await t.call("/api/v1/commands?filter[category_id]=0", { token: admin });
    expect(orphans.body.data.map((c: { id: number }) => c.id)).toEqual([run.id, ver.id]);
    expect(orphans.body.data[0].category_ids).toEqual([]);
  });

  it("names only the commands left without a category when it unlinks shared ones", async () => {
    const a = await category("Shared A");
    const b = await category("Shared B");
    const shared = await command("show inventory", [a.id, b.id]);
    const own = await command("show clock", [a.id]);
    const del = await t.call(`/api/v1/categories/${a.id}`, { method: "DELETE", token: admin });
    expect(del.body.detail).toBe(
      `Category ${a.id} deleted; unlinked from 2 commands (now in no category, so never run until added to one: command ${own.id})`,
    );
    expect((await t.call(`/api/v1/commands/${shared.id}`, { token: admin })).body.data.category_ids).toEqual([b.id]);
  });

  it("validates names", async () => {
    const dup = await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "default" } });
    expect(dup).toMatchObject({ status: 422, body: { errors: { name: ["name 'default' is already taken"] } } });
    const empty = await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: " " } });
    expect(empty.body.errors.name).toEqual(["name must not be empty"]);
  });

  it("refuses to delete a category devices use or a role's scope names, and detaches profiles", async () => {
    const used = await category("Switches");
    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "sw-core-01", device_ip: "192.0.2.60", device_vendor: "Cisco", device_category_id: used.id },
    });
    expect((await t.call(`/api/v1/categories/${used.id}`, { token: admin })).body.data.devices_count).toBe(1);
    const refused = await t.call(`/api/v1/categories/${used.id}`, { method: "DELETE", token: admin });
    expect(refused).toMatchObject({
      status: 409,
      body: { message: `Category ${used.id} is used by 1 device; move them to another category first` },
    });
    await t.call(`/api/v1/devices/${dev.body.data.id}`, { method: "DELETE", token: admin });

    await t.role({ name: "switch-team", categoryIds: [used.id] });
    const scoped = await t.call(`/api/v1/categories/${used.id}`, { method: "DELETE", token: admin });
    expect(scoped).toMatchObject({
      status: 409,
      body: { message: "The category scopes role 'switch-team'; change the role's scope first" },
    });

    const free = await category("Firewalls");
    const now = new Date();
    const [profile] = await t.db
      .insert(deviceProfiles)
      .values({
        name: "fw profile",
        nameKey: nameKey("fw profile"),
        categoryId: free.id,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const del = await t.call(`/api/v1/categories/${free.id}`, { method: "DELETE", token: admin });
    expect(del.body.detail).toBe(`Category ${free.id} deleted; cleared from 1 device profile`);
    expect(
      (await t.db.select().from(deviceProfiles).where(eq(deviceProfiles.id, profile!.id)))[0]!.categoryId,
    ).toBeNull();
  });

  it("bulk deletes all or nothing, and lists with search, sort and pages", async () => {
    const x = await category("Bulk X");
    const y = await category("Bulk Y");
    const page = await t.call("/api/v1/categories?search=bulk&sort=-name&per_page=1&fields=name", { token: admin });
    expect(page.body).toMatchObject({ data: [{ name: "Bulk Y" }], meta: { total: 2, last_page: 2 } });
    expect((await t.call("/api/v1/categories?sort=devices", { token: admin })).status).toBe(422);
    const bad = await t.call("/api/v1/categories/bulk", {
      method: "DELETE",
      token: admin,
      body: { ids: [x.id, 99999] },
    });
    expect(bad).toMatchObject({
      status: 422,
      body: { errors: { "ids.1": ["ids.1 99999 is not an existing category"] } },
    });
    const ok = await t.call("/api/v1/categories/bulk", { method: "DELETE", token: admin, body: { ids: [x.id, y.id] } });
    expect(ok.body.message).toBe("Deleted 2 categories");
  });

  it("needs categories.read / categories.write", async () => {
    const other = await t.token(["commands.read", "commands.write"]);
    expect((await t.call("/api/v1/categories", { token: other })).status).toBe(403);
    const reader = await t.token(["categories.read"]);
    expect((await t.call("/api/v1/categories", { token: reader })).status).toBe(200);
    expect((await t.call("/api/v1/categories", { method: "POST", token: reader, body: { name: "nope" } })).status).toBe(
      403,
    );
  });
});

describe("a category's commands in a download", () => {
  it("are what the collector runs for a device in it, instead of its template's", async () => {
    const routers = await category("Core routers");
    // The template's own list is show running-config and three more; this category has one command of its own.
    expect(await command("show vtp status", [routers.id])).toMatchObject({
      command: "show vtp status",
      category_ids: [routers.id],
    });
    const device = await startFakeDevice({
      script: iosScript("cat-r1", ["hostname cat-r1", "end"]).script,
      initPrompt: "cat-r1#",
      auth: { username: "netops", password: "Cat-Pass-2026" },
    });
    try {
      const id = await addLoopbackDevice(t, admin, {
        port: device.port,
        templateId: await builtinTemplateId(t, "cisco-ios"),
        username: "netops",
        password: "Cat-Pass-2026",
        device_category_id: routers.id,
      });
      const job = await downloadOnce(t, id);
      expect(job.outcome).toBe("success");
      expect(job.result).toMatchObject({ commands: 1, changed: 1 });
      expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({
        "show vtp status": "VTP Operating Mode                : Transparent\n",
      });
    } finally {
      await device.close();
    }
  });
});
