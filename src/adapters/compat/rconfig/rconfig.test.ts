import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { vendors } from "../../../db/schema/index.ts";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { builtinTemplateId, downloadOnce, IOS_CONFIG_COMMAND, iosScript } from "../../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../../test/helpers/fake-device.ts";
import { storeConfig } from "../../../modules/configs/storage/store.ts";
import { TEXT_BUDGET_BYTES } from "./configs.ts";

/**
 * One case per route of rConfig's API (rConfig V8: routes/api_v1.php, routes/api_v2.php in rconfig/rconfig), each
 * sending the request as rConfig's code shows it and asserting the fields its clients read. Every answer is also
 * held to netkeep's generated API description (test/helpers/contract.ts), so the added fields are documented.
 */

const AUTH = { username: "rc-user", password: "Rc-Pass-2026" };
const RUNNING = ["hostname rc-r1", "interface Gi1/0/1", " description uplink", "ntp server 192.0.2.123", "end"];
let t: TestContext;
let admin: string;
let fake: FakeDevice;
/** What the fake router answers for its running configuration now. */
let running: string[];
const ids = { cisco: 0, ios: 0, tag: 0, category: 0, device: 0 };

beforeAll(async () => {
  fake = await startFakeDevice({
    script: (line) => iosScript("rc-r1", running).script(line),
    initPrompt: "rc-r1#",
    auth: AUTH,
  });
});
afterAll(() => fake.close());

// Every test starts on a database of its own, holding a tag and a category; a test that needs the router or its
// downloads makes them (addRouter, routerWithTwoVersions), so none reads what another left.
beforeEach(async () => {
  running = [...RUNNING];
  t = await createTestContext();
  admin = await t.token();
  ids.device = 0;
  ids.cisco = (await t.db.select({ id: vendors.id }).from(vendors).where(eq(vendors.name, "Cisco")))[0]!.id;
  ids.ios = await builtinTemplateId(t, "cisco-ios");
  ids.tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "rc-core" } })).body.data.id;
  ids.category = (
    await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "rc-routers" } })
  ).body.data.id;
}, 30_000);
afterEach(() => t.close());

/** The fake router, added with rConfig's device form: its id. */
async function addRouter(): Promise<number> {
  const res = await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: storeDeviceBody("rc-r1", fake.port),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

/**
 * The router with two versions of its running configuration in ids.device: the first from rConfig's download-now,
 * the second (its NTP server changed) from a download the API queued.
 */
async function routerWithTwoVersions() {
  ids.device = await addRouter();
  expect((await t.call(`/api/v1/download-now/${ids.device}`, { token: admin })).status).toBe(200);
  expect((await downloadOnce(t, ids.device)).outcome).toBe("success");
  running = running.map((l) => (l.startsWith("ntp server") ? "ntp server 192.0.2.124" : l));
  expect((await downloadOnce(t, ids.device)).outcome).toBe("success");
}

/** rConfig's StoreDeviceRequest body, as its device form posts it (app/Http/Requests/StoreDeviceRequest.php). */
const storeDeviceBody = (name: string, port: number) => ({
  device_name: name,
  device_ip: "127.0.0.1",
  device_port_override: String(port),
  device_vendor: [{ id: ids.cisco }],
  device_template: [{ id: ids.ios }],
  device_tags: [{ id: ids.tag }],
  device_category_id: ids.category,
  device_model: "C9300-48P",
  device_main_prompt: "rc-r1#",
  device_enable_prompt: "rc-r1>",
  device_default_creds_on: false,
  device_username: AUTH.username,
  device_password: AUTH.password,
  device_enable_password: "",
});

describe("rConfig's auth edge (app/Http/Middleware/ApiV1TokenAuth.php, app/Traits/RespondsWithHttpStatus.php)", () => {
  it("answers ?api_token= with rConfig's 422 before authentication, and every error carries success: false", async () => {
    const old = await t.call("/api/v1/apitest?api_token=whatever");
    expect(old).toMatchObject({
      status: 422,
      body: { success: false, message: "Token param name needs to be updated to apitoken." },
    });
    expect(await t.call("/api/v1/devices")).toMatchObject({
      status: 401,
      body: { success: false, message: "Unauthorized" },
    });
    expect(await t.call("/api/v1/devices/999999", { token: admin })).toMatchObject({
      status: 404,
      body: { success: false },
    });
    const invalid = await t.call("/api/v1/devices", { method: "POST", token: admin, body: { device_name: "x" } });
    expect(invalid).toMatchObject({
      status: 422,
      body: { success: false, errors: { device_name: expect.any(Array) } },
    });
    // The query token itself, under its right name, still works.
    expect((await t.call(`/api/v1/apitest?apitoken=${admin}`)).status).toBe(200);
  });
});

describe("v1 and v2 /apitest (app/Http/Controllers/Api/v1/ApiTestController.php)", () => {
  it("answers success with a welcome", async () => {
    for (const v of ["v1", "v2"]) {
      const res = await t.call(`/api/${v}/apitest`, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        message: `Welcome to the rConfig REST API version ${v.slice(1)} (netkeep)`,
      });
    }
  });
});

describe("POST /api/v1/devices with StoreDeviceRequest (app/Http/Controllers/Api/DeviceController.php store/update)", () => {
  it("creates the device from rConfig's body: relations by [{id}], prompts ignored, success and the new id answered", async () => {
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: storeDeviceBody("rc-r1", fake.port),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      success: true,
      message: "Device created successfully!",
      data: { id: expect.any(Number) },
    });
    ids.device = res.body.data.id;
    expect(res.body.data).toMatchObject({
      device_vendor: "Cisco",
      device_template_id: ids.ios,
      device_category_id: ids.category,
      device_tags: ["rc-core"],
      device_port_override: fake.port,
      device_model: "C9300-48P",
      device_username: AUTH.username,
      has_password: true,
      has_enable_password: false,
    });
  });

  it("takes ids and names for tags and vendor too, and names a wrong id in a 422", async () => {
    const byIds = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { ...storeDeviceBody("rc-ids-1", 22), device_vendor: ids.cisco, device_tags: [ids.tag, "rc-new"] },
    });
    expect(byIds.status).toBe(201);
    expect(byIds.body.data.device_tags).toEqual(["rc-core", "rc-new"]);
    // Text is always a name, as in netkeep's own field: a tag named like an id stays a name.
    const numeric = await t.call(`/api/v1/devices/${byIds.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_tags: [String(ids.tag), "2024"] },
    });
    expect(numeric.body.data.device_tags).toEqual(["2024", String(ids.tag)].sort());
    const gone = await t.call(`/api/v1/devices/${byIds.body.data.id}`, { method: "DELETE", token: admin });
    expect(gone).toMatchObject({
      status: 200,
      body: { success: true, message: "Device deleted successfully!", detail: `Device ${byIds.body.data.id} deleted` },
    });
    const wrong = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { ...storeDeviceBody("rc-ids-2", 22), device_vendor: [{ id: 99999 }], device_tags: [{ id: 88888 }] },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual({
      device_vendor: ["device_vendor id 99999 is not an existing vendor"],
      device_tags: ["device_tags.0 id 88888 is not an existing tag"],
    });
  });

  it("refuses a tag list longer than netkeep's 100 with the limit, before looking its ids up (tens of thousands of ids were a 500)", async () => {
    const many = Array.from({ length: 40_000 }, (_, i) => i + 1);
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { ...storeDeviceBody("rc-many-tags", 22), device_tags: many },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.device_tags).toEqual(["device_tags must have at most 100 items"]);
  });

  it("updates with rConfig's PATCH body (the whole form again) and answers success", async () => {
    ids.device = await addRouter();
    const res = await t.call(`/api/v1/devices/${ids.device}`, {
      method: "PATCH",
      token: admin,
      body: { ...storeDeviceBody("rc-r1", fake.port), device_model: "C9300-24T" },
    });
    expect(res).toMatchObject({
      status: 200,
      body: {
        success: true,
        message: "Device edited successfully!",
        data: { id: ids.device, device_model: "C9300-24T", device_template_id: ids.ios },
      },
    });
  });
});

describe("download-now and configurations (app/Http/Controllers/Api/v1/ConfigActionsController.php, v1/ConfigsController.php)", () => {
  it("GET /api/v1/download-now/{id} answers 200 with success and rConfig's message, the job beside", async () => {
    ids.device = await addRouter();
    const res = await t.call(`/api/v1/download-now/${ids.device}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      message: `Download started for device ${ids.device}`,
      data: { device_id: ids.device, state: "queued", id: expect.any(Number) },
    });
    expect((await downloadOnce(t, ids.device)).outcome).toBe("success");
    expect(await t.call("/api/v1/download-now/999999", { token: admin })).toMatchObject({
      status: 404,
      body: { success: false },
    });
  });

  it("GET /api/v1/configs/all-by-deviceid/{id} answers every row with rConfig's fields and the text", async () => {
    await routerWithTwoVersions();
    const res = await t.call(`/api/v1/configs/all-by-deviceid/${ids.device}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const running2 = res.body.data.filter((r: { command: string }) => r.command === IOS_CONFIG_COMMAND);
    expect(running2.map((r: { config_version: number }) => r.config_version).sort()).toEqual([1, 2]);
    const newest = running2.find((r: { latest_version: number }) => r.latest_version === 1);
    expect(newest).toMatchObject({
      config_version: 2,
      download_status: 1,
      download_outcome: "success",
      config_filename: expect.stringMatching(/^rc-r1_.*_2\.txt$/),
      config_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      config_filesize: newest.size,
      start_time: expect.any(String),
    });
    expect(newest.config).toContain("ntp server 192.0.2.124");
    // The file name is the one the download route gives the same text.
    const download = await t.request(`/api/v1/configs/${newest.id}/download`, { token: admin });
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${newest.config_filename}"`);
    expect(await download.text()).toBe(newest.config);
    expect(res.body.meta.per_page).toBe(500);
  });

  it("GET /api/v1/configs/all-by-deviceid/{id} carries at most TEXT_BUDGET_BYTES of text in one answer; later versions' config is null", async () => {
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "rc-big-1", device_ip: "192.0.2.77", device_vendor: "Cisco" },
    });
    const deviceId = created.body.data.id as number;
    // Three versions of about 7 MiB each: two fit the budget, the third would pass it.
    const lines = (7 * 1024 * 1024) / 32;
    const body = Array.from({ length: lines }, (_, i) => `interface ${String(i).padStart(21, "0")}\n`).join("");
    const text = (v: number) => `! version ${v}\n${body}`;
    for (const v of [1, 2, 3]) {
      await storeConfig(t.db, {
        deviceId,
        command: "show running-config",
        text: text(v),
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: new Date(Date.UTC(2026, 0, v)),
      });
    }
    const res = await t.call(`/api/v1/configs/all-by-deviceid/${deviceId}`, { token: admin });
    expect(res.status).toBe(200);
    const rows = res.body.data as { config: string | null; config_filesize: number; config_version: number }[];
    expect(rows).toHaveLength(3);
    const carried = rows.filter((r) => r.config !== null);
    expect(carried).toHaveLength(2);
    expect(carried.reduce((n, r) => n + r.config!.length, 0)).toBeLessThanOrEqual(TEXT_BUDGET_BYTES);
    for (const r of carried) expect(r.config).toBe(text(r.config_version));
    expect(rows.find((r) => r.config === null)!.config_filesize).toBe(text(1).length);
  }, 60_000);

  it("GET /api/v1/configs/status/{deviceid}/{status} counts downloads by rConfig's status", async () => {
    await routerWithTwoVersions();
    const count = async (v: string, device: string, status: string) =>
      await t.call(`/api/${v}/configs/status/${device}/${status}`, { token: admin });
    expect((await count("v1", String(ids.device), "success")).body).toEqual({
      success: true,
      message: `Config status count for device ID ${ids.device} with status success`,
      data: { count: 2 },
    });
    expect((await count("v2", "all", "failed")).body.data).toEqual({ count: 0 });
    expect((await count("v1", String(ids.device), "sideways")).status).toBe(422);
    expect((await count("v1", "999999", "all")).status).toBe(422);
  });

  it("GET|POST /api/v1/configs/search takes rConfig's parameters and answers matches with line_text and context", async () => {
    await routerWithTwoVersions();
    const get = await t.call(
      `/api/v1/configs/search?searchTerm=ntp%20server&devices[]=${ids.device}&commands[]=${encodeURIComponent(IOS_CONFIG_COMMAND)}&limit=10&case_sensitive=0&latest_version_only=1&lines_before=1&lines_after=1`,
      { token: admin },
    );
    expect(get.status).toBe(200);
    expect(get.body.success).toBe(true);
    expect(get.body.data).toHaveLength(1);
    expect(get.body.data[0]).toMatchObject({
      id: expect.any(Number),
      device_id: ids.device,
      config_command: IOS_CONFIG_COMMAND,
      device: { id: ids.device, device_name: "rc-r1" },
    });
    expect(get.body.data[0].matches[0]).toMatchObject({
      line_text: "ntp server 192.0.2.124",
      context: [" description uplink", "ntp server 192.0.2.124", "end"],
    });

    // The newer form's body: criteria, tags and vendors by id, every version, one match per config.
    const post = await t.call("/api/v2/configs/search", {
      method: "POST",
      token: admin,
      body: {
        criteria: [{ term: "NTP SERVER" }],
        criteria_mode: "all",
        tags: [ids.tag],
        vendors: [ids.cisco],
        categories: [ids.category],
        results_per_config: 1,
        latest_version_only: false,
        case_sensitive: false,
      },
    });
    expect(post.status).toBe(200);
    expect(post.body.data.map((h: { version: number }) => h.version).sort()).toEqual([1, 2]);
    expect(post.body.data.every((h: { matches: unknown[] }) => h.matches.length === 1)).toBe(true);
    // The same criteria as a PHP client puts them in a query string.
    const nested = await t.call(
      `/api/v1/configs/search?criteria[0][term]=ntp%20server&criteria[1][term]=uplink&criteria_mode=and&latest_version_only=true`,
      { token: admin },
    );
    expect(nested.body.data.map((h: { version: number; matches: unknown[] }) => [h.version, h.matches.length])).toEqual(
      [[2, 2]],
    );
    const caseSensitive = await t.call(`/api/v1/configs/search?search_term=NTP%20SERVER&case_sensitive=true`, {
      token: admin,
    });
    expect(caseSensitive.body.data).toEqual([]);
  });

  it("GET /api/v2/config-changes/by-config/{id} and /{id} answer rConfig's config_diff, config_version, config_change_type, change_trigger", async () => {
    await routerWithTwoVersions();
    const newest = (
      await t.call(
        `/api/v1/configs/latest-by-deviceid/${ids.device}?filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}`,
        { token: admin },
      )
    ).body.data[0];
    const byConfig = await t.call(`/api/v2/config-changes/by-config/${newest.id}`, { token: admin });
    expect(byConfig.status).toBe(200);
    expect(byConfig.body).toMatchObject({
      success: true,
      data: { current_config_id: newest.id, config_version: 2, config_change_type: "changed", change_trigger: "api" },
    });
    expect(byConfig.body.data.config_diff).toContain("+ntp server 192.0.2.124");
    const show = await t.call(`/api/v2/config-changes/${byConfig.body.data.id}`, { token: admin });
    expect(show.body.data).toEqual(byConfig.body.data);
    const older = (
      await t.call(
        `/api/v2/configs?filter[device_id]=${ids.device}&filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}&filter[latest]=false`,
        { token: admin },
      )
    ).body.data;
    expect(older.map((c: { version: number }) => c.version)).toEqual([1]);
    const first = await t.call(`/api/v2/config-changes/by-config/${older[0].id}`, { token: admin });
    expect(first.body.data).toMatchObject({
      config_version: 1,
      config_change_type: "added",
      change_trigger: "download_now",
    });
  });
});

describe("devices as rConfig's DeviceController answers them (app/Http/Controllers/Api/DeviceController.php, v2/DeviceController.php)", () => {
  it("GET /api/v2/devices: relations and the Laravel paginator's fields beside netkeep's", async () => {
    await routerWithTwoVersions();
    expect(
      (
        await t.call("/api/v1/devices", {
          method: "POST",
          token: admin,
          body: { device_name: "rc-list-2", device_ip: "192.0.2.9", device_vendor: "Juniper" },
        })
      ).status,
    ).toBe(201);
    const res = await t.call("/api/v2/devices?perPage=1&page=1", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      total: res.body.meta.total,
      current_page: 1,
      per_page: 1,
      last_page: res.body.meta.total,
      from: 1,
      to: 1,
      next_page_url: expect.stringContaining("page=2"),
      prev_page_url: null,
    });
    const all = (await t.call("/api/v2/devices?filter[device_name]=rc-r1", { token: admin })).body.data;
    expect(all).toHaveLength(1);
    const newest = (
      await t.call(
        `/api/v1/configs/latest-by-deviceid/${ids.device}?filter[command]=${encodeURIComponent(IOS_CONFIG_COMMAND)}`,
        { token: admin },
      )
    ).body.data[0];
    expect(all[0]).toMatchObject({
      vendor: [{ id: ids.cisco, vendorName: "Cisco" }],
      template: [{ id: ids.ios, templateName: "cisco-ios" }],
      tag: [{ id: ids.tag, tagname: "rc-core" }],
      category: [{ id: ids.category, categoryName: "rc-routers" }],
      device_vendor: "Cisco",
      device_tags: ["rc-core"],
    });
    expect(all[0].last_config.id).toBeGreaterThanOrEqual(newest.id);
    const one = await t.call(`/api/v1/devices/${ids.device}`, { token: admin });
    expect(one.body.data).toMatchObject({
      vendor: [{ vendorName: "Cisco" }],
      last_config: { id: all[0].last_config.id },
    });
  });

  it("GET /api/v2/devices/summary answers rConfig's backup figures", async () => {
    await routerWithTwoVersions();
    const res = await t.call("/api/v2/devices/summary", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      total_devices: res.body.data.total,
      backup_success_last_run: 1,
      backup_failed_last_run: 0,
      never_backed_up: res.body.data.total - 1,
      last_run_at: expect.any(String),
    });
  });

  it("POST /api/v2/devices/{id}/disable and enable answer success", async () => {
    ids.device = await addRouter();
    expect(
      (await t.call(`/api/v2/devices/${ids.device}/disable`, { method: "POST", token: admin })).body,
    ).toMatchObject({ success: true, data: { enabled: false } });
    expect((await t.call(`/api/v2/devices/${ids.device}/enable`, { method: "POST", token: admin })).body).toMatchObject(
      { success: true, data: { enabled: true } },
    );
  });
});

describe("dashboard and health (app/Http/Controllers/Api/DashboardController.php, SystemHealthController.php)", () => {
  it("GET /api/v1/configinfo answers rConfig's counts", async () => {
    await routerWithTwoVersions();
    const res = await t.call("/api/v1/configinfo", { token: admin });
    expect(res.body).toMatchObject({
      success: true,
      data: {
        deviceCount: expect.any(Number),
        deviceDownCount: 0,
        configTotalCount: expect.any(Number),
        configDownCount: 0,
      },
    });
    expect(res.body.data.configTotalCount).toBeGreaterThanOrEqual(2);
  });

  it("GET /api/v1/sysinfo answers rConfig's server keys beside netkeep's system information", async () => {
    const res = await t.call("/api/v1/sysinfo", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ServerName: expect.any(String),
      PHPVersion: expect.stringContaining("netkeep"),
      MySQLVersion: expect.stringContaining("SQLite"),
      RedisVersion: null,
      data: { version: expect.any(String) },
    });
  });

  it("GET /api/v1/health-latest and /api/v2/dashboard/health-latest carry rConfig's check fields", async () => {
    for (const path of ["/api/v1/health-latest", "/api/v2/dashboard/health-latest"]) {
      const res = await t.call(path, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.data.checks.length).toBeGreaterThan(0);
      expect(res.body.data.checks[0]).toMatchObject({
        label: expect.any(String),
        shortSummary: res.body.data.checks[0].message,
        endedAt: res.body.data.ran_at,
      });
    }
  });
});

describe("scope: rConfig's figures count only what a scoped token may see", () => {
  it("answers 404 for a device outside the scope and counts nothing beyond it", async () => {
    await routerWithTwoVersions();
    await t.role({ name: "rc-elsewhere", tags: ["rc-elsewhere"] });
    const scoped = await t.token(undefined, { role: "rc-elsewhere" });
    expect(await t.call(`/api/v1/configs/status/${ids.device}/all`, { token: scoped })).toMatchObject({
      status: 422,
      body: { success: false, message: "Configs not found for this device ID." },
    });
    expect((await t.call("/api/v2/configs/status/all/all", { token: scoped })).body.data).toEqual({ count: 0 });
    expect((await t.call("/api/v1/configinfo", { token: scoped })).body.data).toEqual({
      deviceCount: 0,
      deviceDownCount: 0,
      configTotalCount: 0,
      configDownCount: 0,
    });
    expect((await t.call("/api/v2/devices/summary", { token: scoped })).body.data).toMatchObject({
      total_devices: 0,
      backup_success_last_run: 0,
      backup_failed_last_run: 0,
      last_run_at: null,
    });
    expect((await t.call("/api/v1/configs/search?searchTerm=ntp", { token: scoped })).body.data).toEqual([]);
    // Admin sees the same device counted.
    expect((await t.call("/api/v2/configs/status/all/all", { token: admin })).body.data.count).toBeGreaterThan(0);
  });
});

describe("rConfig's master data by its field names (app/Http/Requests/StoreTagRequest.php, StoreCategoryRequest.php, StoreVendorRequest.php)", () => {
  it("creates and updates tags, categories and vendors from rConfig's bodies and answers rConfig's names beside netkeep's", async () => {
    const tag = await t.call("/api/v1/tags", {
      method: "POST",
      token: admin,
      body: { tagname: "rc-dmz", tagDescription: "DMZ switches" },
    });
    expect(tag).toMatchObject({
      status: 201,
      body: {
        success: true,
        message: "Tag created successfully!",
        data: { name: "rc-dmz", description: "DMZ switches", tagname: "rc-dmz", tagDescription: "DMZ switches" },
      },
    });
    const renamed = await t.call(`/api/v1/tags/${tag.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { tagname: "rc-dmz-2" },
    });
    expect(renamed.body.data).toMatchObject({ name: "rc-dmz-2", tagname: "rc-dmz-2" });
    const category = await t.call("/api/v1/categories", {
      method: "POST",
      token: admin,
      body: { categoryName: "rc-firewalls", categoryDescription: "ASA" },
    });
    expect(category.body.data).toMatchObject({
      name: "rc-firewalls",
      categoryName: "rc-firewalls",
      categoryDescription: "ASA",
    });
    const vendor = await t.call("/api/v1/vendors", {
      method: "POST",
      token: admin,
      body: { vendorName: "RC Networks" },
    });
    expect(vendor.body.data).toMatchObject({ name: "RC Networks", vendorName: "RC Networks" });
    const listed = (await t.call("/api/v1/tags?filter[name]=rc-dmz-2", { token: admin })).body.data;
    expect(listed).toEqual([expect.objectContaining({ tagname: "rc-dmz-2", name: "rc-dmz-2" })]);
    expect((await t.call(`/api/v1/vendors/${vendor.body.data.id}`, { token: admin })).body).toMatchObject({
      success: true,
      data: { vendorName: "RC Networks" },
    });
    const command = await t.call("/api/v1/commands", {
      method: "POST",
      token: admin,
      body: { command: "show rc-inventory", description: "from rConfig", category: [{ id: category.body.data.id }] },
    });
    expect(command).toMatchObject({
      status: 201,
      body: { data: { command: "show rc-inventory", category_ids: [category.body.data.id] } },
    });
    const missing = await t.call("/api/v1/tags", { method: "POST", token: admin, body: { tagDescription: "no name" } });
    expect(missing).toMatchObject({ status: 422, body: { success: false, errors: { name: expect.any(Array) } } });
  });
});

describe("rConfig's master-data resources (routes/api_v1.php apiResource lines)", () => {
  it("lists every resource rConfig's v1 routes name", async () => {
    for (const path of [
      "device-credentials",
      "templates",
      "categories",
      "commands",
      "vendors",
      "tags",
      "tasks",
      "users",
      "configs",
    ]) {
      const res = await t.call(`/api/v1/${path}?perPage=5`, { token: admin });
      expect(res.status, path).toBe(200);
      expect(Array.isArray(res.body.data), path).toBe(true);
    }
  });
});
