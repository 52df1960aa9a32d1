import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { devices, vendors } from "../../../db/schema/index.ts";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";

/**
 * rConfig requests as its controllers read them (rconfig/rconfig app/Http/Controllers/Api/*.php, reached through
 * routes/api_v1.php's apiResources), sent as its clients send them.
 */

let t: TestContext;
let admin: string;
const ids = { cisco: 0, juniper: 0, core: 0, edge: 0, routers: 0, switches: 0, r1: 0, r2: 0, sw1: 0 };

const post = (path: string, body: unknown, token = admin) => t.call(path, { method: "POST", token, body });
const names = (res: { body: { data: { device_name: string }[] } }) => res.body.data.map((d) => d.device_name).sort();

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  const vendorId = async (name: string) =>
    (await t.db.select({ id: vendors.id }).from(vendors).where(eq(vendors.name, name)))[0]!.id;
  ids.cisco = await vendorId("Cisco");
  ids.juniper = await vendorId("Juniper");
  ids.core = (await post("/api/v1/tags", { tagname: "rq-core" })).body.data.id;
  ids.edge = (await post("/api/v1/tags", { tagname: "rq-edge" })).body.data.id;
  ids.routers = (await post("/api/v1/categories", { categoryName: "rq-routers" })).body.data.id;
  ids.switches = (await post("/api/v1/categories", { categoryName: "rq-switches" })).body.data.id;
  const device = async (name: string, ip: string, vendor: number, tag: number, category: number) =>
    (
      await post("/api/v1/devices", {
        device_name: name,
        device_ip: ip,
        device_vendor: [{ id: vendor }],
        device_tags: [{ id: tag }],
        device_category_id: category,
        device_default_creds_on: true,
      })
    ).body.data.id as number;
  ids.r1 = await device("rq-r1", "192.0.2.11", ids.cisco, ids.core, ids.routers);
  ids.r2 = await device("rq-r2", "192.0.2.12", ids.juniper, ids.edge, ids.routers);
  ids.sw1 = await device("rq-sw1", "198.51.100.7", ids.cisco, ids.edge, ids.switches);
  await t.db.update(devices).set({ status: "up" }).where(eq(devices.id, ids.r1));
  await t.db.update(devices).set({ status: "unreachable" }).where(eq(devices.id, ids.r2));
  await t.db.update(devices).set({ enabled: false }).where(eq(devices.id, ids.sw1));
}, 30_000);
afterAll(async () => {
  await t.close();
});

describe("GET /devices with rConfig's filters (DeviceController::index, spatie AllowedFilter)", () => {
  const list = (query: string) => t.call(`/api/v1/devices?${query}`, { token: admin });

  it("reads filter[q] as a search over name and address", async () => {
    expect(names(await list("filter[q]=rq-r"))).toEqual(["rq-r1", "rq-r2"]);
    expect(names(await list("filter[q]=198.51.100"))).toEqual(["rq-sw1"]);
  });

  it("reads filter[tag], filter[vendor] and filter[category] as ids", async () => {
    expect(names(await list(`filter[tag]=${ids.edge}`))).toEqual(["rq-r2", "rq-sw1"]);
    expect(names(await list(`filter[vendor]=${ids.juniper}`))).toEqual(["rq-r2"]);
    expect(names(await list(`filter[category]=${ids.routers}`))).toEqual(["rq-r1", "rq-r2"]);
    expect(names(await list(`filter[category]=${ids.routers}&filter[tag]=${ids.core}`))).toEqual(["rq-r1"]);
  });

  it("reads filter[status] as rConfig's numbers (1 up, 0 unreachable, 100 disabled) and netkeep's names alike", async () => {
    expect(names(await list("filter[status]=1"))).toEqual(["rq-r1"]);
    expect(names(await list("filter[status]=0"))).toEqual(["rq-r2"]);
    expect(names(await list("filter[status]=100"))).toEqual(["rq-sw1"]);
    expect(names(await list("filter[status]=up,unreachable"))).toEqual(["rq-r1", "rq-r2"]);
    const bad = await list("filter[status]=7");
    expect(bad).toMatchObject({
      status: 422,
      body: { success: false, errors: { "filter[status]": [expect.stringContaining("0, 1, 2, 100")] } },
    });
  });

  it("still refuses a filter neither knows, and filter[q] beside search", async () => {
    expect((await list("filter[colour]=red")).status).toBe(422);
    expect(await list("filter[q]=rq&search=rq")).toMatchObject({
      status: 422,
      body: { errors: { "filter[q]": [expect.any(String)] } },
    });
  });
});

describe("commands (CommandController)", () => {
  it("creates a command from categoryArray and answers success with rConfig's message", async () => {
    const res = await post("/api/v1/commands", {
      command: "show rq-version",
      description: "rq",
      categoryArray: [ids.routers, ids.switches],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      message: "Command created successfully!",
      data: { category_ids: [ids.routers, ids.switches] },
    });
    const edited = await t.call(`/api/v1/commands/${res.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { command: "show rq-version", categoryArray: [ids.switches] },
    });
    expect(edited.body).toMatchObject({
      success: true,
      message: "Command edited successfully!",
      data: { category_ids: [ids.switches] },
    });
  });

  it("reads filter[q] as a search over the command", async () => {
    await post("/api/v1/commands", { command: "show rq-inventory", categoryArray: [ids.routers] });
    const res = await t.call("/api/v1/commands?filter[q]=rq-inv", { token: admin });
    expect(res.body.data.map((c: { command: string }) => c.command)).toEqual(["show rq-inventory"]);
  });
});

describe("tags (TagController): filter[tagname] and sort=tagname", () => {
  it("filters and sorts by rConfig's name field", async () => {
    const one = await t.call("/api/v1/tags?filter[tagname]=rq-edge", { token: admin });
    expect(one.body.data.map((r: { tagname: string }) => r.tagname)).toEqual(["rq-edge"]);
    const sorted = await t.call("/api/v1/tags?filter[q]=rq-&sort=-tagname", { token: admin });
    expect(sorted.body.data.map((r: { tagname: string }) => r.tagname)).toEqual(["rq-edge", "rq-core"]);
  });
});

describe("deletes answer rConfig's success and message (ApiBaseController::destroy)", () => {
  it("tag, category and command", async () => {
    const tag = (await post("/api/v1/tags", { tagname: "rq-gone" })).body.data.id;
    const category = (await post("/api/v1/categories", { categoryName: "rq-gone" })).body.data.id;
    const command = (await post("/api/v1/commands", { command: "show rq-gone", categoryArray: [category] })).body.data
      .id;
    expect(await t.call(`/api/v1/commands/${command}`, { method: "DELETE", token: admin })).toMatchObject({
      status: 200,
      body: {
        success: true,
        message: "Command deleted successfully!",
        detail: expect.stringContaining(`Command ${command} deleted`),
      },
    });
    expect(await t.call(`/api/v1/tags/${tag}`, { method: "DELETE", token: admin })).toMatchObject({
      status: 200,
      body: {
        success: true,
        message: "Tag deleted successfully!",
        detail: expect.stringContaining(`Tag ${tag} deleted`),
      },
    });
    expect(await t.call(`/api/v1/categories/${category}`, { method: "DELETE", token: admin })).toMatchObject({
      status: 200,
      body: { success: true, message: "Category deleted successfully!" },
    });
  });
});

describe("tasks (StoreTaskRequest: device and task_tags as [{id}])", () => {
  it("creates a device task and a tag task from rConfig's relation lists", async () => {
    const byDevice = await post("/api/v1/tasks", {
      task_name: "rq devices",
      task_desc: "rq",
      task_command: "rconfig:download-device",
      task_cron: ["0", "2", "*", "*", "*"],
      device: [{ id: ids.r1 }, { id: ids.r2 }],
      task_email_notify: 0,
      download_report_notify: 0,
      verbose_download_report_notify: 0,
    });
    expect(byDevice.status).toBe(201);
    expect(byDevice.body).toMatchObject({
      success: true,
      message: "Task created successfully!",
      data: { devices: [ids.r1, ids.r2] },
    });
    const byTag = await post("/api/v1/tasks", {
      task_name: "rq tags",
      task_command: "rconfig:download-tag",
      task_cron: ["0", "3", "*", "*", "*"],
      task_tags: [{ id: ids.edge }],
    });
    expect(byTag.status).toBe(201);
    expect(byTag.body.data).toMatchObject({ tags: [ids.edge], task_type: "download_tags" });
  });
});

describe("configs/status and all-by-deviceid for a device rConfig has no configs of (ConfigsController)", () => {
  it("answers rConfig's 422 for an unknown device and for one outside the caller's scope alike", async () => {
    await t.role({ name: "rq-elsewhere", tags: ["rq-elsewhere"] });
    const scoped = await t.token(undefined, { role: "rq-elsewhere" });
    const expected = { status: 422, body: { success: false, message: "Configs not found for this device ID." } };
    for (const [token, id] of [
      [admin, 999_999],
      [scoped, ids.r1],
    ] as const) {
      expect(await t.call(`/api/v1/configs/status/${id}/all`, { token })).toMatchObject(expected);
      expect(await t.call(`/api/v2/configs/status/${id}/success`, { token })).toMatchObject(expected);
      expect(await t.call(`/api/v1/configs/all-by-deviceid/${id}`, { token })).toMatchObject(expected);
    }
    // A device on record without versions yet: netkeep's answer, an empty list and a count of 0.
    expect(await t.call(`/api/v1/configs/all-by-deviceid/${ids.r1}`, { token: admin })).toMatchObject({
      status: 200,
      body: { data: [] },
    });
    expect(await t.call(`/api/v1/configs/status/${ids.r1}/all`, { token: admin })).toMatchObject({
      status: 200,
      body: { data: { count: 0 } },
    });
  });
});
