import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, appSettings } from "../../db/schema/index.ts";
import { smtpPassword } from "../../platform/settings/service.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const patch = (body: unknown, token = admin) => t.call("/api/v1/settings", { method: "PATCH", token, body });

describe("settings", () => {
  it("shows the defaults before anything is set", async () => {
    const res = await t.call("/api/v1/settings", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      timezone: "UTC",
      login_banner: "",
      default_credential_id: null,
      backups: { cron: "0 1 * * *", keep: 7 },
      smtp: { host: null, has_password: false },
      updated_at: null,
    });
  });

  it("merges a change section by section, applies it at once and records it", async () => {
    const res = await patch({
      timezone: "europe/berlin",
      backups: { keep: 3 },
      smtp: { host: "smtp.example.net", port: 465, encryption: "tls" },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      timezone: "Europe/Berlin",
      backups: { cron: "0 1 * * *", keep: 3 },
      smtp: { host: "smtp.example.net", port: 465, encryption: "tls", username: null },
    });
    // Another request (no cache, no restart) sees it.
    expect((await t.call("/api/v1/settings", { token: admin })).body.data.backups.keep).toBe(3);
    const second = await patch({ backups: { cron: "15 4 * * *" } });
    expect(second.body.data.backups).toEqual({ cron: "15 4 * * *", keep: 3 });
    // One schedule: the database backup system task's.
    const task = (await t.call("/api/v1/tasks?filter[task_type]=backup_database", { token: admin })).body.data[0];
    expect(task.task_cron).toBe("15 4 * * *");
    expect(
      (await t.call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: admin, body: { task_cron: "45 2 * * *" } }))
        .status,
    ).toBe(200);
    expect((await t.call("/api/v1/settings", { token: admin })).body.data.backups.cron).toBe("45 2 * * *");

    const entries = await t.db.select().from(activityLog).where(eq(activityLog.action, "settings.update"));
    expect(entries).toHaveLength(2);
    expect(entries[0]!.changes).toMatchObject({
      timezone: { old: "UTC", new: "Europe/Berlin" },
      "backups.keep": { old: 7, new: 3 },
      "smtp.port": { old: 587, new: 465 },
    });
    expect(Object.keys(entries[1]!.changes ?? {})).toEqual(["backups.cron"]);
  });

  it("gives new tasks sent without a time zone the settings' zone", async () => {
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: { task_name: "zoned by settings", task_type: "download_all", task_cron: "0 3 * * *" },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    expect(task.body.data.timezone).toBe("Europe/Berlin");
  });

  it("keeps the SMTP password encrypted and never shows it", async () => {
    const res = await patch({ smtp: { password: "mail-Secret-77" } });
    expect(res.status).toBe(200);
    expect(res.body.data.smtp.has_password).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain("mail-Secret-77");
    const [row] = await t.db.select().from(appSettings);
    expect(row!.smtpPasswordEnc).not.toContain("mail-Secret-77");
    expect(JSON.stringify(row!.values)).not.toContain("mail-Secret-77");
    expect(await smtpPassword(t.db, t.secrets)).toBe("mail-Secret-77");
    const [entry] = await t.db
      .select()
      .from(activityLog)
      .where(eq(activityLog.action, "settings.update"))
      .orderBy(activityLog.id)
      .limit(1)
      .offset(2);
    expect(JSON.stringify(entry!.changes)).not.toContain("mail-Secret-77");
    expect(entry!.changes).toMatchObject({ "smtp.password": { old: "[hidden]", new: "[changed]" } });

    const cleared = await patch({ smtp: { password: null } });
    expect(cleared.body.data.smtp.has_password).toBe(false);
    expect(await smtpPassword(t.db, t.secrets)).toBeNull();
  });

  it("refuses bad values with a 422 naming each field, changing nothing", async () => {
    const before = (await t.call("/api/v1/settings", { token: admin })).body.data;
    const res = await patch({
      timezone: "Mars/Olympus",
      backups: { cron: "0 25 * * *", keep: 0 },
      default_credential_id: 999,
      colour: "red",
    });
    expect(res.status).toBe(422);
    // The shape is checked first: out-of-range numbers and unknown fields.
    expect(Object.keys(res.body.errors).sort()).toEqual(["backups.keep", "body"]);
    expect(res.body.errors.body[0]).toMatch(/unknown field: colour/);
    const fields = await patch({
      timezone: "Mars/Olympus",
      backups: { cron: "0 25 * * *" },
      default_credential_id: 999,
    });
    expect(fields.status).toBe(422);
    expect(Object.keys(fields.body.errors).sort()).toEqual(["backups.cron", "default_credential_id", "timezone"]);
    expect(fields.body.errors["backups.cron"][0]).toMatch(/invalid hour field '25'/);
    const keep = await patch({ backups: { keep: 0 } });
    expect(keep.body.errors["backups.keep"][0]).toMatch(/at least 1/);
    expect((await t.call("/api/v1/settings", { token: admin })).body.data).toEqual(before);
  });

  it("accepts a credential that exists as the default for new devices", async () => {
    const cred = await t.call("/api/v1/device-credentials", {
      method: "POST",
      token: admin,
      body: { cred_name: "default-cred", cred_username: "netops", cred_password: "pw-123456" },
    });
    expect(cred.status).toBe(201);
    const res = await patch({ default_credential_id: cred.body.data.id });
    expect(res.body.data.default_credential_id).toBe(cred.body.data.id);
    const device = (body: Record<string, unknown>) =>
      t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: { device_ip: "192.0.2.20", device_vendor: "Cisco", ...body },
      });
    const plain = await device({ device_name: "gets-default-cred" });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.data.device_cred_id).toBe(cred.body.data.id);
    // A device with a login of its own keeps it.
    const own = await device({ device_name: "own-login", device_username: "local", device_password: "pw-local-1" });
    expect(own.body.data.device_cred_id).toBe(0);
  });

  it("needs system.read to show and system.write to change; a scoped role may not change them", async () => {
    const none = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/settings", { token: none })).status).toBe(403);
    const reader = await t.token(["system.read"]);
    expect((await t.call("/api/v1/settings", { token: reader })).status).toBe(200);
    expect((await patch({ login_banner: "x" }, reader)).status).toBe(403);
    await t.role({ name: "scoped-system", tags: ["branch"] });
    const scoped = await t.token(undefined, { role: "scoped-system" });
    expect((await t.call("/api/v1/settings", { token: scoped })).status).toBe(200);
    const refused = await patch({ login_banner: "x" }, scoped);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/role that sees all devices/);
  });

  it("checks the ldap section: a whole directory to enable it, roles that exist, an LDAP url, filters with their placeholder", async () => {
    const missing = await patch({ ldap: { enabled: true, url: "ldaps://dc1.example.net" } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors["ldap.user_base"]).toEqual([
      "ldap.user_base is needed to enable the directory (where users are searched)",
    ]);
    const role = await patch({ ldap: { group_roles: { netops: "no-such-role" } } });
    expect(role.status).toBe(422);
    expect(role.body.errors["ldap.group_roles"][0]).toMatch(
      /maps group 'netops' to role 'no-such-role', which does not exist; use one of: admin, operator, viewer/,
    );
    const url = await patch({ ldap: { url: "https://dc1.example.net" } });
    expect(url.status).toBe(422);
    expect(url.body.errors["ldap.url"]).toBeDefined();
    const filter = await patch({ ldap: { user_filter: "(uid=alice)" } });
    expect(filter.status).toBe(422);
    expect(filter.body.errors["ldap.user_filter"]).toEqual(["ldap.user_filter must contain {username}"]);
    // Role names are taken in any case and stored as the role spells itself.
    const ok = await patch({
      ldap: {
        enabled: true,
        url: "ldaps://dc1.example.net:636",
        user_base: "ou=people,dc=example,dc=net",
        group_roles: { netops: "OPERATOR" },
      },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.ldap).toMatchObject({
      enabled: true,
      group_roles: { netops: "operator" },
      has_bind_password: false,
      user_filter: "(uid={username})",
    });
    expect((await patch({ ldap: { enabled: false } })).status).toBe(200);
  });
});
