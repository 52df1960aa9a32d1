import { count, gte, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configChanges, configs } from "../../db/schema/index.ts";
import { enqueueDeviceJob, PRIORITY } from "../../platform/jobs/queue.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, iosScript } from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";
import { freePort } from "../../../test/helpers/process.ts";

/**
 * The dashboard over a small fleet backed up for real (a fake SSH device): one device up, one whose last download
 * failed, one never backed up, one disabled; and a scoped user who sees only the device tagged for them.
 */

const AUTH = { username: "netops", password: "Dash-Pass-2026" };
let t: TestContext;
let admin: string;
let fake: FakeDevice;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  fake = await startFakeDevice({
    script: iosScript("dash-r1", ["hostname dash-r1", "end"]).script,
    initPrompt: "dash-r1#",
    auth: AUTH,
  });
  const templateId = await builtinTemplateId(t, "cisco-ios");
  ids.up = await addLoopbackDevice(t, admin, {
    port: fake.port,
    templateId,
    ...AUTH,
    name: "dash-up",
    device_tags: ["edge"],
  });
  ids.failing = await addLoopbackDevice(t, admin, { port: fake.port, templateId, ...AUTH, name: "dash-failing" });
  ids.never = await addLoopbackDevice(t, admin, { port: fake.port, templateId, ...AUTH, name: "dash-never" });
  ids.off = await addLoopbackDevice(t, admin, {
    port: fake.port,
    templateId,
    ...AUTH,
    name: "dash-off",
    enabled: false,
  });
  expect((await downloadOnce(t, ids.up!)).outcome).toBe("success");
  expect((await downloadOnce(t, ids.failing!)).outcome).toBe("success");
  // Then nothing answers on its port any more.
  await t.call(`/api/v1/devices/${ids.failing}`, {
    method: "PATCH",
    token: admin,
    body: { device_port_override: await freePort() },
  });
  expect((await downloadOnce(t, ids.failing!, { connectTimeoutMs: 2000 })).outcome).toBe("unreachable");
}, 60_000);
afterAll(async () => {
  await fake.close();
  await t.close();
});

const get = async (path: string, token = admin) => {
  const res = await t.call(`/api/v1/dashboard/${path}`, { token });
  expect(res.status).toBe(200);
  return res.body.data;
};

describe("dashboard", () => {
  it("counts devices up, failing, disabled and never backed up", async () => {
    expect(await get("counts")).toEqual({ total: 4, up: 1, failing: 1, disabled: 1, never_backed_up: 1 });
  });

  it("lists the failing devices with the reason, and the devices added last", async () => {
    const errored = await get("errored-devices");
    expect(errored).toEqual([
      expect.objectContaining({
        device_id: ids.failing,
        device_name: "dash-failing",
        outcome: "unreachable",
        reason: expect.any(String),
        last_backup_at: expect.any(String),
      }),
    ]);
    expect(errored[0].reason.length).toBeGreaterThan(0);
    expect((await get("latest-devices?limit=2")).map((d: { device_name: string }) => d.device_name)).toEqual([
      "dash-off",
      "dash-never",
    ]);
    expect((await t.call("/api/v1/dashboard/latest-devices?limit=0", { token: admin })).status).toBe(422);
  });

  it("tells versions stored and changes, the same the change pulse shows for today", async () => {
    const [versions] = await t.db.select({ n: count() }).from(configs);
    const [changes] = await t.db
      .select({ n: count() })
      .from(configChanges)
      .where(gte(configChanges.createdAt, new Date(Date.now() - 24 * 3_600_000)));
    const info = await get("config-info");
    expect(info).toEqual({
      versions_stored: versions!.n,
      devices_with_versions: 2,
      changes_24h: changes!.n,
      changes_7d: changes!.n,
    });
    const pulse = await get("change-pulse");
    expect(pulse).toHaveLength(30);
    expect(pulse.at(-1)).toEqual({ date: new Date().toISOString().slice(0, 10), changes: changes!.n });
    expect(pulse.slice(0, -1).every((d: { changes: number }) => d.changes === 0)).toBe(true);
  });

  it("shows the queue, each task's last run, and the compliance summary", async () => {
    await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: ids.never!, trigger: "schedule", priority: PRIORITY.scheduled, maxAttempts: 2 },
      new Date(),
    );
    expect(await get("queue")).toMatchObject({
      queued: 1,
      running: 0,
      by_type: { download: { queued: 1, running: 0 } },
      oldest_queued_seconds: expect.any(Number),
    });
    const tasks = await get("task-status");
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks.every((task: { last_run: unknown }) => task.last_run === null)).toBe(true);
    expect(await get("compliance")).toMatchObject({ not_compliant: 0 });
  });

  it("shows a scoped user only the devices in scope", async () => {
    await t.role({ name: "edge-team", tags: ["edge"] });
    const scoped = await t.token(["system.read"], { role: "edge-team" });
    expect(await get("counts", scoped)).toEqual({ total: 1, up: 1, failing: 0, disabled: 0, never_backed_up: 0 });
    expect(await get("errored-devices", scoped)).toEqual([]);
    const [own] = await t.db
      .select({ n: count() })
      .from(configs)
      .where(inArray(configs.deviceId, [ids.up!]));
    expect((await get("config-info", scoped)).versions_stored).toBe(own!.n);
    expect((await get("queue", scoped)).queued).toBe(0);
    const info = (await t.call("/api/v1/system/info", { token: scoped })).body.data;
    expect(info.counts).toMatchObject({ devices: 1, versions: own!.n });
  });

  it("needs system.read", async () => {
    const other = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/dashboard/counts", { token: other })).status).toBe(403);
  });
});
