import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { builtinTemplateId, downloadOnce, iosScript } from "../../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../../test/helpers/fake-device.ts";
import { until } from "../../../../test/helpers/until.ts";

/**
 * An integration written against rConfig V8's API, end to end against a fake SSH device and the real download
 * path: it reads only what rConfig answers (success, message, data.id, all-by-deviceid's rows and their
 * config_version, download_status and config, config-changes' config_diff), never a netkeep-only field.
 * Requests as in rConfig's routes/api_v1.php, api_v2.php, StoreDeviceRequest and the v1/v2 controllers.
 */

const AUTH = { username: "flow-user", password: "Flow-Pass-2026" };
let t: TestContext;
let fake: FakeDevice;
let running = ["hostname flow-r1", "snmp-server location ams-row-3", "end"];

beforeAll(async () => {
  t = await createTestContext();
  fake = await startFakeDevice({
    script: (line) => iosScript("flow-r1", running).script(line),
    initPrompt: "flow-r1#",
    auth: AUTH,
  });
}, 30_000);
afterAll(async () => {
  await fake.close();
  await t.close();
});

/** What an rConfig client does: JSON in and out, the token in the apitoken header, `success` tested. */
function rconfigClient(token: string) {
  const call = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await t.call(path, { token, method: init.method, body: init.body });
    if (res.status < 200 || res.status > 299 || res.body.success !== true)
      throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { success: true; message: string; data: any };
  };
  type Row = { id: number; config_version: number; download_status: number; config: string };
  return {
    apiTest: () => call("/api/v1/apitest"),
    createDevice: (body: Record<string, unknown>) => call("/api/v1/devices", { method: "POST", body }),
    downloadNow: (id: number) => call(`/api/v1/download-now/${id}`),
    configs: async (id: number) => (await call(`/api/v1/configs/all-by-deviceid/${id}`)).data as Row[],
    changeOf: (configId: number) => call(`/api/v2/config-changes/by-config/${configId}`),
  };
}

describe("an rConfig client, unchanged, against netkeep", () => {
  it("creates a device, downloads it now, polls its configs, and reads the newest config and its diff", async () => {
    const client = rconfigClient(await t.token());
    expect((await client.apiTest()).success).toBe(true);

    const admin = await t.token();
    const vendor = (await t.call("/api/v1/vendors?filter[name]=Cisco", { token: admin })).body.data[0].id;
    const tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "flow" } })).body.data.id;
    const category = (
      await t.call("/api/v1/categories", { method: "POST", token: admin, body: { name: "flow-routers" } })
    ).body.data.id;
    const created = await client.createDevice({
      device_name: "flow-r1",
      device_ip: "127.0.0.1",
      device_port_override: fake.port,
      device_model: "C9300",
      device_vendor: [{ id: vendor }],
      device_template: [{ id: await builtinTemplateId(t, "cisco-ios") }],
      device_tags: [{ id: tag }],
      device_category_id: category,
      device_main_prompt: "flow-r1#",
      device_enable_prompt: "flow-r1>",
      device_default_creds_on: 0,
      device_username: AUTH.username,
      device_password: AUTH.password,
    });
    const deviceId = created.data.id as number;

    /** Triggers a download the way rConfig's UI button does, lets the collector run it, and polls for a new row. */
    const backUp = async (rowsBefore: number) => {
      expect((await client.downloadNow(deviceId)).message).toBe(`Download started for device ${deviceId}`);
      expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
      return until(
        "a new configuration row",
        () => client.configs(deviceId),
        (rows) => rows.length > rowsBefore,
        {
          tries: 21,
          everyMs: 50,
        },
      );
    };
    const newest = <R extends { id: number }>(rows: R[]) => rows.reduce((a, b) => (b.id > a.id ? b : a));

    const first = await backUp(0);
    expect(first.every((r) => r.download_status === 1)).toBe(true);
    expect(first.map((r) => r.config).join("\n")).toContain("snmp-server location ams-row-3");

    running = ["hostname flow-r1", "snmp-server location ams-row-4", "end"];
    const second = await backUp(first.length);
    const latest = newest(second);
    expect(latest.config_version).toBe(2);
    expect(latest.config).toContain("snmp-server location ams-row-4");

    const change = await client.changeOf(latest.id);
    expect(change.data.config_version).toBe(2);
    expect(change.data.config_diff).toContain("-snmp-server location ams-row-3");
    expect(change.data.config_diff).toContain("+snmp-server location ams-row-4");
  });
});
