import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { createDevice, day, storeVersion } from "./test-fixtures.ts";

/** A token whose owner's role sees only devices tagged "scope-in" must not learn anything about the others. */

let t: TestContext;
let scoped: string;
let devIn: number;
let devOut: number;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestContext();
  const admin = await t.token();
  await t.role({ name: "scoped-configs", tags: ["scope-in"] });
  scoped = await t.token(["configs.read", "configs.write"], { role: "scoped-configs" });
  devIn = await createDevice(t, admin, { device_name: "scope-in-01", device_tags: ["scope-in"] });
  devOut = await createDevice(t, admin, { device_name: "scope-out-01", device_tags: ["elsewhere"] });
  ids.in1 = (await storeVersion(t, { deviceId: devIn, text: "hostname scope-in-01\n", at: day(1) })).configId;
  ids.in2 = (await storeVersion(t, { deviceId: devIn, text: "hostname scope-in-01\nend\n", at: day(2) })).configId;
  ids.out1 = (await storeVersion(t, { deviceId: devOut, text: "hostname scope-out-01\n", at: day(1) })).configId;
  ids.out2 = (await storeVersion(t, { deviceId: devOut, text: "hostname scope-out-01\nend\n", at: day(2) })).configId;
});
afterAll(() => t.close());

const status = async (path: string, method = "GET") => (await t.request(path, { token: scoped, method })).status;

describe.each(["v1", "v2"])("configurations outside the token owner's scope (%s)", (v) => {
  const api = `/api/${v}`;

  it("are absent from lists and totals", async () => {
    const all = await t.call(`${api}/configs`, { token: scoped });
    expect(all.body.data.map((c: { id: number }) => c.id).sort()).toEqual([ids.in1, ids.in2].sort());
    expect(all.body.meta.total).toBe(2);
    expect((await t.call(`${api}/configs?filter[device_id]=${devOut}`, { token: scoped })).body.meta.total).toBe(0);
  });

  it("answer 404 to show, content, download, diff and the per-device lists, as unknown ids do", async () => {
    for (const path of [
      `/configs/${ids.in2}`,
      `/configs/${ids.in2}/content`,
      `/configs/${ids.in2}/download`,
      `/configs/diff?from=${ids.in1}&to=${ids.in2}`,
      `/configs/all-by-deviceid/${devIn}`,
      `/configs/latest-by-deviceid/${devIn}`,
    ]) {
      expect(await status(api + path), path).toBe(200);
    }
    for (const path of [
      `/configs/${ids.out2}`,
      `/configs/${ids.out2}/content`,
      `/configs/${ids.out2}/download`,
      `/configs/diff?from=${ids.in1}&to=${ids.out2}`,
      `/configs/diff?from=${ids.out1}&to=${ids.in2}`,
      `/configs/latest-by-deviceid/${devOut}`,
    ]) {
      const res = await t.call(api + path, { token: scoped });
      expect(res.status, path).toBe(404);
      expect(res.body.message, path).toMatch(/not found$/);
    }
    // rConfig's all-by-deviceid answers its 422 for an unknown device, and so for one outside the scope.
    const rconfig = await t.call(`${api}/configs/all-by-deviceid/${devOut}`, { token: scoped });
    expect(rconfig).toMatchObject({ status: 422, body: { message: "Configs not found for this device ID." } });
  });

  it("are left out of the export", async () => {
    const res = await t.request(`${api}/configs/export`, { token: scoped });
    const tar = gunzipSync(new Uint8Array(await res.arrayBuffer())).toString("latin1");
    // ustar keeps the directory (prefix) and the file name in separate header fields.
    expect(tar).toContain("scope-in-01");
    expect(tar).toContain("show-running-config.txt");
    expect(tar).not.toContain("scope-out");
  });
});

describe("config changes outside the scope (v2)", () => {
  it("are absent from the list and answer 404 by id and by config", async () => {
    const list = await t.call("/api/v2/config-changes", { token: scoped });
    expect(list.body.data.map((c: { device_id: number }) => c.device_id)).toEqual([devIn, devIn]);
    const admin = await t.token();
    const [outChange] = (await t.call(`/api/v2/config-changes?filter[config_id]=${ids.out2}`, { token: admin })).body
      .data;
    expect(await status(`/api/v2/config-changes/${outChange.id}`)).toBe(404);
    expect(await status(`/api/v2/config-changes/by-config/${ids.out2}`)).toBe(404);
    expect(await status(`/api/v2/config-changes/by-config/${ids.in2}`)).toBe(200);
  });
});

describe("deleting outside the scope", () => {
  it("answers 404 and deletes nothing", async () => {
    expect(await status(`/api/v1/configs/${ids.out1}`, "DELETE")).toBe(404);
    const admin = await t.token();
    expect((await t.call(`/api/v1/configs/${ids.out1}`, { token: admin })).status).toBe(200);
    expect(await status(`/api/v2/configs/${ids.in1}`, "DELETE")).toBe(200);
  });
});
