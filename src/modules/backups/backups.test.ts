import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, like } from "drizzle-orm";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { svc } from "../../../test/helpers/svc.ts";
import { activityLog } from "../../db/schema/index.ts";

let t: TestContext;
let admin: string;
const clock = manualClock();
beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterAll(() => t.close());

const create = async (token = admin) => {
  clock.advance(1000);
  return t.call("/api/v1/system/backups", { method: "POST", token });
};

describe("database backups over the API", () => {
  it("takes a backup that downloads with its checksum and restores to the database as it was", async () => {
    const device = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "backed-up-01", device_ip: "192.0.2.10", device_vendor: "Cisco" },
    });
    expect(device.status).toBe(201);
    const made = await create();
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    expect(id).toMatch(/^netkeep-\d{8}T\d{9}Z\.db\.gz$/);
    expect(made.headers.get("location")).toBe(`http://localhost/api/v1/system/backups/${id}/download`);

    const list = await t.call("/api/v1/system/backups", { token: admin });
    expect(list.body.data).toEqual([made.body.data]);

    const download = await t.request(`/api/v1/system/backups/${id}/download`, { token: admin });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("application/gzip");
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(made.body.data.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(made.body.data.sha256);
    expect(download.headers.get("x-checksum-sha256")).toBe(made.body.data.sha256);

    // What an operator does with the download: put it and its checksum somewhere and restore it.
    const elsewhere = mkdtempSync(join(tmpdir(), "netkeep-downloaded-"));
    try {
      const file = join(elsewhere, id);
      writeFileSync(file, bytes);
      writeFileSync(`${file}.sha256`, `${made.body.data.sha256}  ${id}\n`);
      const restore = await svc(["db:restore", file], { STORAGE_DIR: join(elsewhere, "storage") });
      expect(restore.stderr).toBe("");
      const restored = createClient({ url: `file:${join(elsewhere, "storage", "netkeep.db")}` });
      try {
        const rows = await restored.execute("select name from devices");
        expect(rows.rows.map((r) => r.name)).toEqual(["backed-up-01"]);
      } finally {
        restored.close();
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    const [entry] = await t.db.select().from(activityLog).where(eq(activityLog.action, "database_backup.create"));
    expect(entry!.changes).toMatchObject({ id: { old: null, new: id }, sha256: { new: made.body.data.sha256 } });
  });

  it("keeps the number of backups the settings say, deleting the oldest", async () => {
    expect(
      (await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { backups: { keep: 2 } } })).status,
    ).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create()).body.data.id);
    const list = await t.call("/api/v1/system/backups", { token: admin });
    expect(list.body.data.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1]]);
  });

  it("deletes a backup, then answers 404 for it; names that are not backups are 404 too", async () => {
    const id = (await create()).body.data.id;
    const del = await t.call(`/api/v1/system/backups/${id}`, { method: "DELETE", token: admin });
    expect(del).toMatchObject({ status: 200, body: { message: `Backup ${id} deleted` } });
    expect((await t.call(`/api/v1/system/backups/${id}/download`, { token: admin })).status).toBe(404);
    expect((await t.call(`/api/v1/system/backups/${id}`, { method: "DELETE", token: admin })).status).toBe(404);
    for (const name of ["netkeep.db", "..%2Fnetkeep.db", "app.key"]) {
      expect((await t.call(`/api/v1/system/backups/${name}/download`, { token: admin })).status).toBe(404);
    }
    expect(
      (await t.db.select().from(activityLog).where(like(activityLog.action, "database_backup.delete"))).length,
    ).toBe(1);
  });

  it("needs system.read to list and download, system.write to create and delete, and a role that sees all devices", async () => {
    const id = (await create()).body.data.id;
    const none = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/system/backups", { token: none })).status).toBe(403);
    const reader = await t.token(["system.read"]);
    expect((await t.call("/api/v1/system/backups", { token: reader })).status).toBe(200);
    expect((await t.request(`/api/v1/system/backups/${id}/download`, { token: reader })).status).toBe(200);
    expect((await create(reader)).status).toBe(403);
    expect((await t.call(`/api/v1/system/backups/${id}`, { method: "DELETE", token: reader })).status).toBe(403);

    await t.role({ name: "scoped-backups", tags: ["branch"] });
    const scoped = await t.token(undefined, { role: "scoped-backups" });
    for (const res of [
      await t.call("/api/v1/system/backups", { token: scoped }),
      await t.call(`/api/v1/system/backups/${id}/download`, { token: scoped }),
      await create(scoped),
      await t.call(`/api/v1/system/backups/${id}`, { method: "DELETE", token: scoped }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/role that sees all devices/);
    }
  });
});
