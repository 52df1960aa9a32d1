import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asc, sql } from "drizzle-orm";
import { events } from "../../db/schema/index.ts";
import { issueTokenRecorded, revokeTokenRecorded } from "../../platform/auth/token-audit.ts";
import { createDevices } from "../devices/service.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { createWebTestContext } from "../../../test/web/client.ts";

let t: TestContext;
let admin: string;
beforeEach(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterEach(() => t.close());

const outbox = async (db = t.db) =>
  (await db.select().from(events).orderBy(asc(events.id))).map((e) => ({
    type: e.type,
    payload: e.payload,
    deviceId: e.deviceId,
  }));

describe("device events", () => {
  it("creating, updating, disabling and deleting a device each write their event, with the device but never its secrets", async () => {
    const tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "core" } })).body.data.id;
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "edge-01",
        device_ip: "192.0.2.10",
        device_vendor: "Cisco",
        device_tags: ["core"],
        device_password: "Hunter2-Device-Pass",
        device_enable_password: "Enable-Secret-99",
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const device = { id, name: "edge-01", ip: "192.0.2.10", category_id: null, tag_ids: [tag] };
    expect(
      (
        await t.call(`/api/v1/devices/${id}`, {
          method: "PATCH",
          token: admin,
          body: { device_ip: "192.0.2.11", device_password: "Second-Secret-42" },
        })
      ).status,
    ).toBe(200);
    // A write that changes nothing is no event.
    expect(
      (await t.call(`/api/v1/devices/${id}`, { method: "PATCH", token: admin, body: { device_ip: "192.0.2.11" } }))
        .status,
    ).toBe(200);
    expect((await t.call(`/api/v1/devices/${id}/disable`, { method: "POST", token: admin })).status).toBe(200);
    expect((await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token: admin })).status).toBe(200);

    const written = await outbox();
    expect(written).toEqual([
      { type: "device.created", payload: { device }, deviceId: id },
      {
        type: "device.updated",
        payload: { device: { ...device, ip: "192.0.2.11" }, changed: ["device_ip", "device_password"] },
        deviceId: id,
      },
      {
        type: "device.updated",
        payload: { device: { ...device, ip: "192.0.2.11" }, changed: ["enabled"] },
        deviceId: id,
      },
      { type: "device.deleted", payload: { device: { ...device, ip: "192.0.2.11" } }, deviceId: id },
    ]);
    const text = JSON.stringify(written);
    for (const secret of ["Hunter2-Device-Pass", "Enable-Secret-99", "Second-Secret-42"])
      expect(text).not.toContain(secret);
  });

  it("a change that rolls back after its event was written leaves no event", async () => {
    // The fault: the audit row, written after the device and its event in the same transaction, cannot be written.
    await t.db.run(
      sql`create trigger refuse_audit before insert on activity_log begin select raise(abort, 'the audit row cannot be written'); end`,
    );
    const ctx = {
      db: t.db,
      secrets: t.secrets,
      actor: { system: "test" },
      scope: { all: true as const },
      abilities: "all" as const,
      now: new Date(),
    };
    await expect(
      createDevices(
        ctx,
        [{ device_name: "rolled-back", device_ip: "192.0.2.20", device_vendor: "Cisco" } as never],
        false,
      ),
    ).rejects.toThrow(/activity_log/);
    expect(await t.db.all(sql`select id from devices where name = 'rolled-back'`)).toEqual([]);
    expect(await outbox()).toEqual([]);
  });
});

describe("token and login events", () => {
  it("issuing and revoking a token write token.created and token.revoked, never the token's value", async () => {
    const userId = await t.user({ username: "ops" });
    const issued = await issueTokenRecorded(
      t.db,
      { system: "test" },
      { userId, name: "ci", abilities: ["devices.read"], expiresAt: null },
      new Date(),
    );
    expect(await revokeTokenRecorded(t.db, { system: "test" }, issued.id, new Date())).toBe(true);
    const written = await outbox();
    expect(written).toEqual([
      {
        type: "token.created",
        payload: {
          token_id: issued.id,
          token_name: "ci",
          user_id: userId,
          username: "ops",
          abilities: ["devices.read"],
          expires_at: null,
        },
        deviceId: null,
      },
      {
        type: "token.revoked",
        payload: { token_id: issued.id, token_name: "ci", user_id: userId, username: "ops" },
        deviceId: null,
      },
    ]);
    expect(JSON.stringify(written)).not.toContain(issued.value);
  });

  it("a refused sign-in writes user.login_failed with the reason, never the password typed", async () => {
    const web = await createWebTestContext();
    try {
      await web.user({ username: "alice" });
      const browser = web.client();
      expect((await browser.login("alice", "Not-Her-Password-1")).status).toBe(401);
      expect((await browser.login("nobody", "Not-Her-Password-2")).status).toBe(401);
      const written = await outbox(web.db);
      expect(written.map((e) => [e.type, e.payload.username, e.payload.reason])).toEqual([
        ["user.login_failed", "alice", "wrong password"],
        ["user.login_failed", "nobody", "unknown user"],
      ]);
      expect(JSON.stringify(written)).not.toMatch(/Not-Her-Password/);
    } finally {
      await web.close();
    }
  });
});
