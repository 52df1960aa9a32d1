import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { unifiedDiff } from "./config-diff.ts";
import { createDevice, day, RUNNING, storeVersion } from "../test-fixtures.ts";

let t: TestContext;
let reader: string;
let devA: number;
let devB: number;
const configIds: Record<string, number> = {};

const a1 = "hostname chg-a\ninterface Gi0/1\n shutdown\nend\n";
const a2 = "hostname chg-a\ninterface Gi0/1\n no shutdown\n description core\nend\n";
const a3 = "hostname chg-a\nend\n";

beforeAll(async () => {
  t = await createTestContext();
  const admin = await t.token();
  reader = await t.token(["configs.read"]);
  devA = await createDevice(t, admin, { device_name: "chg-dev-a", device_tags: ["core"] });
  devB = await createDevice(t, admin, { device_name: "chg-dev-b" });
  configIds.a1 = (await storeVersion(t, { deviceId: devA, text: a1, at: day(1), trigger: "schedule" })).configId;
  configIds.a2 = (await storeVersion(t, { deviceId: devA, text: a2, at: day(2), trigger: "download_now" })).configId;
  await storeVersion(t, { deviceId: devA, text: a2, at: day(3), trigger: "schedule" });
  configIds.a3 = (await storeVersion(t, { deviceId: devA, text: a3, at: day(4), trigger: "cli" })).configId;
  configIds.b1 = (
    await storeVersion(t, { deviceId: devB, text: "hostname chg-b\n", at: day(5), trigger: "api" })
  ).configId;
});
afterAll(() => t.close());

const changes = async (query = "") => {
  const res = await t.call(`/api/v2/config-changes${query}`, { token: reader });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, any>[];
};

describe("config changes (v2)", () => {
  it("lists one change per new version, newest first, with what changed and what triggered it", async () => {
    const all = await changes();
    expect(all.map((c) => c.config_id)).toEqual([configIds.b1, configIds.a3, configIds.a2, configIds.a1]);
    expect(all[2]).toEqual({
      id: expect.any(Number),
      device_id: devA,
      device_name: "chg-dev-a",
      command: RUNNING,
      config_id: configIds.a2,
      version: 2,
      previous_config_id: configIds.a1,
      previous_version: 1,
      lines_added: 2,
      lines_removed: 1,
      trigger: "download_now",
      changed_by: null,
      secrets_changed: false,
      created_at: day(2).toISOString(),
    });
    expect(all[1]).toMatchObject({ version: 3, previous_version: 2, lines_added: 0, lines_removed: 3, trigger: "cli" });
    expect(all[3]).toMatchObject({
      version: 1,
      previous_config_id: null,
      lines_added: 4,
      lines_removed: 0,
      trigger: "schedule",
    });
  });

  it("filters by device, tag, time range, trigger and command", async () => {
    expect((await changes(`?filter[device_id]=${devB}`)).map((c) => c.config_id)).toEqual([configIds.b1]);
    expect((await changes("?filter[device_tags]=Core")).map((c) => c.device_id)).toEqual([devA, devA, devA]);
    expect((await changes("?filter[date_from]=2026-06-02&filter[date_to]=2026-06-04")).map((c) => c.config_id)).toEqual(
      [configIds.a3, configIds.a2],
    );
    expect((await changes("?filter[trigger]=api,cli")).map((c) => c.trigger)).toEqual(["api", "cli"]);
    expect(await changes("?filter[command]=show%20version")).toEqual([]);
    const bad = await t.call("/api/v2/config-changes?filter[trigger]=cron", { token: reader });
    expect(bad.status).toBe(422);
  });

  it("shows one change with its unified diff, by id or by the version it produced", async () => {
    const [listed] = await changes(`?filter[config_id]=${configIds.a2}`);
    const one = await t.call(`/api/v2/config-changes/${listed!.id}`, { token: reader });
    expect(one.status).toBe(200);
    const lines = one.body.data.diff.split("\n");
    expect(lines).toContain("- shutdown");
    expect(lines).toContain("+ no shutdown");
    expect(lines).toContain("+ description core");
    expect(lines.filter((l: string) => /^[+-][^+-]/.test(l))).toHaveLength(3);
    const byConfig = await t.call(`/api/v2/config-changes/by-config/${configIds.a2}`, { token: reader });
    expect(byConfig.body.data).toEqual(one.body.data);
  });

  it("renders each diff from the two versions' texts when asked: the unified diff of the one against the other", async () => {
    for (const [id, from, to, v] of [
      [configIds.a2, a1, a2, 2],
      [configIds.a3, a2, a3, 3],
    ] as const) {
      const res = await t.call(`/api/v2/config-changes/by-config/${id}`, { token: reader });
      expect(res.body.data.diff).toBe(unifiedDiff(from, to, `${RUNNING} v${v - 1}`, `${RUNNING} v${v}`).text);
    }
  });

  it("shows a first version's change as the whole text added", async () => {
    const first = await t.call(`/api/v2/config-changes/by-config/${configIds.a1}`, { token: reader });
    expect(first.body.data).toMatchObject({ version: 1, previous_config_id: null, lines_added: 4, lines_removed: 0 });
    expect(first.body.data.diff).toBe(
      [
        "--- show running-config v0",
        "+++ show running-config v1",
        "@@ -0,0 +1,4 @@",
        ...a1
          .trimEnd()
          .split("\n")
          .map((l) => `+${l}`),
        "",
      ].join("\n"),
    );
  });

  it("answers 404 for unknown changes, and exists in v2 only", async () => {
    expect((await t.call("/api/v2/config-changes/999999", { token: reader })).status).toBe(404);
    expect((await t.call("/api/v2/config-changes/by-config/999999", { token: reader })).status).toBe(404);
    expect((await t.call("/api/v1/config-changes", { token: reader })).status).toBe(404);
  });
});
