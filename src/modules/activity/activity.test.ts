import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { ABILITIES } from "../../platform/auth/abilities.ts";
import { activityLog, devices, users } from "../../db/schema/index.ts";
import { storeVersion } from "../configs/test-fixtures.ts";

let t: TestContext;
let admin: string;
let adminId: number;
let deviceA: number;
let deviceB: number;
let tagId: number;
beforeAll(async () => {
  t = await createTestContext();
  adminId = await t.user({ username: "auditor" });
  admin = await t.token(ABILITIES, { userId: adminId });
  const post = async (path: string, body: unknown) =>
    (await t.call(`/api/v1${path}`, { method: "POST", token: admin, body })).body.data.id as number;
  tagId = await post("/tags", { name: "core" });
  deviceA = await post("/devices", {
    device_name: "core-rtr-01",
    device_ip: "192.0.2.1",
    device_vendor: "Cisco",
    device_tags: ["core"],
  });
  deviceB = await post("/devices", { device_name: "edge-sw-01", device_ip: "192.0.2.2", device_vendor: "Cisco" });
  await t.call(`/api/v1/devices/${deviceA}`, { method: "PATCH", token: admin, body: { device_ip: "192.0.2.10" } });
});
afterAll(() => t.close());

const list = (q = "", token = admin) => t.call(`/api/v1/activity-logs${q}`, { token });
const actions = async (q: string) => (await list(q)).body.data.map((e: { action: string }) => e.action);

describe("activity log: list and show", () => {
  it("lists entries newest first with who, what and the changed fields", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { action: string }) => e.action)).toEqual([
      "device.update",
      "device.create",
      "device.create",
      "tag.create",
    ]);
    const update = res.body.data[0];
    expect(update).toEqual({
      id: expect.any(Number),
      user_id: adminId,
      username: "auditor",
      token_name: `test token ${adminId}`,
      ip: "unknown",
      action: "device.update",
      subject_type: "device",
      subject_id: deviceA,
      changes: { device_ip: { old: "192.0.2.1", new: "192.0.2.10" } },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 25, total: 4, last_page: 1, from: 1, to: 4 });
  });

  it("shows one entry, and 404 for an unknown id", async () => {
    const first = (await list("?sort=id&per_page=1")).body.data[0];
    const shown = await t.call(`/api/v1/activity-logs/${first.id}`, { token: admin });
    expect(shown.body).toEqual({ data: first });
    expect(first).toMatchObject({ action: "tag.create", subject_type: "tag", subject_id: tagId });
    const missing = await t.call("/api/v1/activity-logs/99999", { token: admin });
    expect(missing).toMatchObject({ status: 404, body: { message: "Activity log entry 99999 not found" } });
  });

  it("filters by device, action, subject, user and username; commas mean OR", async () => {
    expect(await actions(`?filter[device]=${deviceA}`)).toEqual(["device.update", "device.create"]);
    expect(await actions(`?filter[device]=${deviceA},${deviceB}&filter[action]=device.create`)).toEqual([
      "device.create",
      "device.create",
    ]);
    expect(await actions("?filter[action]=tag.create,device.update")).toEqual(["device.update", "tag.create"]);
    expect(await actions(`?filter[subject_type]=tag&filter[subject_id]=${tagId}`)).toEqual(["tag.create"]);
    expect(await actions(`?filter[user]=${adminId}&filter[action]=tag.create`)).toEqual(["tag.create"]);
    expect(await actions("?filter[username]=AUDITOR&filter[subject_type]=tag")).toEqual(["tag.create"]);
    expect(await actions("?filter[user]=99999")).toEqual([]);
  });

  it("searches action, username and token name; sorts; paginates; trims fields", async () => {
    expect(await actions("?search=tag.")).toEqual(["tag.create"]);
    expect((await list("?search=AUDIT")).body.meta.total).toBe(4);
    expect((await list(`?search=${encodeURIComponent(`token ${adminId}`)}`)).body.meta.total).toBe(4);
    expect(await actions("?sort=id&per_page=2&page=2")).toEqual(["device.create", "device.update"]);
    const page = await list("?per_page=3&page=2&fields=id,action");
    expect(page.body.meta).toEqual({ current_page: 2, per_page: 3, total: 4, last_page: 2, from: 4, to: 4 });
    expect(page.body.data).toEqual([{ id: expect.any(Number), action: "tag.create" }]);
    expect(await actions("?sort=-created_at&per_page=1")).toEqual(["device.update"]);
  });

  it("answers 422 for unknown filters, sorts and fields, and for bad ids", async () => {
    for (const q of ["filter[password]=x", "sort=action", "fields=secret", "filter[user]=me", "filter[device]=1.5"]) {
      expect((await list(`?${q}`)).status, q).toBe(422);
    }
    expect((await list("?filter[user]=me")).body.errors).toEqual({
      "filter[user]": ["filter[user] values must be whole numbers of at most 15 digits; 'me' is not"],
    });
  });

  it("has no write routes", async () => {
    const entry = (await list("?per_page=1")).body.data[0];
    for (const [method, path] of [
      ["POST", "/activity-logs"],
      ["PATCH", `/activity-logs/${entry.id}`],
      ["DELETE", `/activity-logs/${entry.id}`],
      ["DELETE", "/activity-logs/bulk"],
    ]) {
      const res = await t.call(`/api/v1${path}`, { method, token: admin, body: {} });
      expect(res.status, `${method} ${path}`).toBe(405);
    }
    expect((await list()).body.meta.total).toBe(4);
  });
});

describe("activity log: time range", () => {
  it("filters with created_after (inclusive) and created_before (exclusive), and rejects bad times", async () => {
    const clock = manualClock(new Date("2026-03-01T09:00:00Z"));
    const timed = await createTestContext({ clock });
    try {
      const token = await timed.token();
      for (const name of ["first", "second", "third"]) {
        await timed.call("/api/v1/tags", { method: "POST", token, body: { name } });
        clock.advance(60 * 60_000);
      }
      // tags made at 09:00, 10:00 and 11:00
      const tagsIn = async (q: string) => {
        const res = await timed.call(`/api/v1/activity-logs?sort=id&${q}`, { token });
        expect(res.status, q).toBe(200);
        return res.body.data.map((e: { changes: { name: { new: string } } }) => e.changes.name.new);
      };
      expect(await tagsIn("filter[created_after]=2026-03-01T10:00:00Z")).toEqual(["second", "third"]);
      expect(await tagsIn("filter[created_before]=2026-03-01T10:00:00Z")).toEqual(["first"]);
      expect(
        await tagsIn("filter[created_after]=2026-03-01T09:30:00Z&filter[created_before]=2026-03-01T11:00:00Z"),
      ).toEqual(["second"]);
      expect(await tagsIn(`filter[created_after]=${encodeURIComponent("2026-03-01T11:00:00+01:00")}`)).toEqual([
        "second",
        "third",
      ]);
      expect(await tagsIn("filter[created_after]=2026-03-02")).toEqual([]);
      expect(await tagsIn("filter[created_before]=2026-03-02")).toEqual(["first", "second", "third"]);

      const entries = (await timed.call("/api/v1/activity-logs?sort=id", { token })).body.data;
      expect(entries.map((e: { created_at: string }) => e.created_at)).toEqual([
        "2026-03-01T09:00:00.000Z",
        "2026-03-01T10:00:00.000Z",
        "2026-03-01T11:00:00.000Z",
      ]);

      for (const [q, message] of [
        [
          "filter[created_after]=yesterday",
          "filter[created_after] must be an ISO-8601 time such as 2026-06-01T12:00:00Z or 2026-06-01; 'yesterday' is not",
        ],
        [
          "filter[created_before]=2026-13-45",
          "filter[created_before] must be an ISO-8601 time such as 2026-06-01T12:00:00Z or 2026-06-01; '2026-13-45' is not",
        ],
        ["filter[created_after]=2026-03-01,2026-03-02", "filter[created_after] takes one timestamp, not a list"],
      ]) {
        const res = await timed.call(`/api/v1/activity-logs?${q}`, { token });
        expect(res.status, q).toBe(422);
        expect(res.body.message).toBe(message);
      }
    } finally {
      await timed.close();
    }
  });
});

describe("activity log: secrets", () => {
  it("keeps no password in any entry: device passwords, user passwords and password changes", async () => {
    const secrets = [
      "dev1ce-Pa55word!",
      "en4ble-Secret#",
      "second-dev1ce-pass",
      "user-first-pass-123",
      "user-second-pass-456",
      "user-third-pass-789",
    ];
    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "secret-rtr-01",
        device_ip: "192.0.2.50",
        device_vendor: "Cisco",
        device_password: secrets[0],
        device_enable_password: secrets[1],
      },
    });
    expect(dev.status).toBe(201);
    await t.call(`/api/v1/devices/${dev.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_password: secrets[2] },
    });
    const user = await t.call("/api/v1/users", {
      method: "POST",
      token: admin,
      body: { username: "secretive", email: "s@example.com", password: secrets[3], role: "viewer" },
    });
    await t.call(`/api/v1/users/${user.body.data.id}/password`, {
      method: "POST",
      token: admin,
      body: { password: secrets[4] },
    });
    await t.call(`/api/v1/users/${user.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { password: secrets[5] },
    });

    const [deviceRow] = await t.db.select().from(devices).where(eq(devices.id, dev.body.data.id));
    const stored = [
      deviceRow!.passwordEnc,
      deviceRow!.enablePasswordEnc,
      ...(await t.db.select().from(users)).map((u) => u.passwordHash),
    ].filter(Boolean) as string[];
    const rows = JSON.stringify(await t.db.select().from(activityLog));
    const api = JSON.stringify((await list("?per_page=500")).body);
    for (const text of [rows, api]) {
      for (const secret of [...secrets, ...stored, "pbkdf2"]) expect(text).not.toContain(secret);
    }
    // the writes are there, with secrets only as markers that they changed
    const passwordWrite = (await list(`?filter[device]=${dev.body.data.id}&filter[action]=device.update`)).body.data[0];
    expect(passwordWrite.changes).toEqual({ device_password: { old: "[hidden]", new: "[changed]" } });
    const created = (await list(`?filter[device]=${dev.body.data.id}&filter[action]=device.create`)).body.data[0];
    expect(created.changes.has_password).toEqual({ old: null, new: true });
    expect(await actions(`?filter[subject_type]=user&filter[subject_id]=${user.body.data.id}&sort=id`)).toEqual([
      "user.create",
      "user.password_change",
      "user.password_change",
      "user.update",
    ]);
  });
});

describe("activity log: access", () => {
  it("needs users.read", async () => {
    expect((await t.call("/api/v1/activity-logs")).status).toBe(401);
    const devicesOnly = await t.token(["devices.read"]);
    expect((await list("", devicesOnly)).body).toEqual({
      success: false,
      message: "Invalid ability provided",
      required_ability: "users.read",
    });
    expect((await list("", await t.token(["users.read"]))).status).toBe(200);
  });

  it("hides entries about devices outside the reader's scope, like the devices themselves", async () => {
    await t.role({ name: "core-auditors", permissions: ["users.read", "devices.read"], tags: ["core"] });
    const scoped = await t.token(["users.read"], { role: "core-auditors" });
    const seen = (await list("?per_page=500", scoped)).body.data as {
      subject_type: string;
      subject_id: number;
      id: number;
    }[];
    const deviceIds = [...new Set(seen.filter((e) => e.subject_type === "device").map((e) => e.subject_id))];
    expect(deviceIds).toEqual([deviceA]);
    expect(seen.some((e) => e.subject_type === "tag")).toBe(true);
    const hidden = (await list(`?filter[device]=${deviceB}`)).body.data[0];
    expect((await t.call(`/api/v1/activity-logs/${hidden.id}`, { token: scoped })).status).toBe(404);
    expect((await list(`?filter[device]=${deviceB}`, scoped)).body.meta.total).toBe(0);
  });

  it("hides entries about tasks and runs reaching devices outside the reader's scope, and leaves them out of the total", async () => {
    await t.role({ name: "core-task-auditors", permissions: ["users.read", "tasks.read"], tags: ["core"] });
    const scoped = await t.token(["users.read"], { role: "core-task-auditors" });
    const task = async (body: Record<string, unknown>) => {
      const res = await t.call("/api/v1/tasks", {
        method: "POST",
        token: admin,
        body: { task_cron: "0 3 * * *", ...body },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.id as number;
    };
    const own = await task({ task_name: "core only", task_type: "download_devices", devices: [deviceA] });
    const byTag = await task({ task_name: "core tag", task_type: "download_tags", tags: [tagId] });
    const mixed = await task({
      task_name: "core and edge",
      task_type: "download_devices",
      devices: [deviceA, deviceB],
    });
    expect((await t.call(`/api/v1/tasks/${mixed}/run`, { method: "POST", token: admin })).status).toBe(202);
    const backup = (
      await t.call("/api/v1/tasks?filter[is_system]=true&filter[task_type]=download_all", { token: admin })
    ).body.data[0].id;
    await t.call(`/api/v1/tasks/${backup}/pause`, { method: "POST", token: admin });
    await t.call(`/api/v1/tasks/${backup}/resume`, { method: "POST", token: admin });
    await t.call(`/api/v1/tasks/${own}/pause`, { method: "POST", token: admin });

    const all = (await list("?filter[subject_type]=task&per_page=500")).body;
    expect(all.meta.total).toBe(7);
    const seen = (await list("?filter[subject_type]=task&per_page=500&sort=id", scoped)).body;
    expect(seen.data.map((e: { action: string; subject_id: number }) => [e.action, e.subject_id])).toEqual([
      ["task.create", own],
      ["task.create", byTag],
      ["task.pause", own],
    ]);
    expect(seen.meta.total).toBe(3);
    const hidden = all.data.filter((e: { subject_id: number }) => e.subject_id === mixed || e.subject_id === backup);
    expect(hidden.map((e: { action: string }) => e.action).sort()).toEqual([
      "task.create",
      "task.pause",
      "task.resume",
      "task.run",
    ]);
    for (const entry of hidden)
      expect((await t.call(`/api/v1/activity-logs/${entry.id}`, { token: scoped })).status).toBe(404);
    // What an entry is about is kept for this rule, never shown.
    expect(JSON.stringify(all.data)).not.toContain("@reach");
    expect(
      (await list("?per_page=500", scoped)).body.data.some((e: { subject_type: string }) => e.subject_type === "tag"),
    ).toBe(true);
  });

  it("hides the deletion of a configuration of a device outside the reader's scope", async () => {
    const scoped = await t.token(["users.read"], { role: "core-task-auditors" });
    const configOf = async (deviceId: number) =>
      (await storeVersion(t, { deviceId, text: `hostname ${deviceId}\n`, at: new Date() })).configId;
    const [inside, outside] = [await configOf(deviceA), await configOf(deviceB)];
    for (const id of [inside, outside])
      expect((await t.call(`/api/v1/configs/${id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expect(
      (await list("?filter[action]=config.delete&sort=id")).body.data.map((e: { subject_id: number }) => e.subject_id),
    ).toEqual([inside, outside]);
    const seen = (await list("?filter[action]=config.delete", scoped)).body;
    expect(seen.data.map((e: { subject_id: number }) => e.subject_id)).toEqual([inside]);
    expect(seen.meta.total).toBe(1);
  });
});
