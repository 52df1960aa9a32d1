import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock, TEST_APP_KEY } from "../../../../test/helpers/app.ts";
import {
  SERVICE_DN,
  SERVICE_PASSWORD,
  slapdUnavailable,
  startSlapd,
  SUFFIX,
  type Slapd,
} from "../../../../test/helpers/slapd.ts";
import { svc } from "../../../../test/helpers/svc.ts";
import { createWebTestContext, type WebTestContext } from "../../../../test/web/client.ts";
import { activityLog, appSettings, events, users } from "../../../db/schema/index.ts";

/**
 * More than one directory (ldap.directories): two real slapd servers, the main one (the ldap section's own
 * fields) and "emea", each with its own people, groups and group-to-role mapping.
 */
const unavailable = slapdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the real-slapd tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`src/platform/auth/directory/directories.test.ts skipped: ${unavailable}`);
}

describe.skipIf(unavailable)("several directories, tried in order", () => {
  let main: Slapd;
  let emea: Slapd;
  let t: WebTestContext;
  let admin: string;
  const clock = manualClock(new Date("2026-06-01T09:00:00Z"));
  const EMEA_BIND_PASSWORD = "emea-bind-secret-9Qx";

  const directory = (slapd: Slapd, groupRoles: Record<string, string>) => ({
    url: slapd.ldapsUrl,
    ca_certificate: slapd.caPem,
    bind_dn: SERVICE_DN,
    user_base: `ou=people,${SUFFIX}`,
    group_base: `ou=groups,${SUFFIX}`,
    group_filter: "(member={dn})",
    group_roles: groupRoles,
  });
  const emeaEntry = (extra: Record<string, unknown> = {}) => ({
    name: "emea",
    ...directory(emea, { "emea-netops": "operator", "emea-helpdesk": "viewer" }),
    ...extra,
  });
  const patch = (ldap: Record<string, unknown>) =>
    t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { ldap } });
  const eventsOf = async (type: string) =>
    (await t.db.select().from(events).where(eq(events.type, type))).map((e) => e.payload as Record<string, unknown>);
  const userRow = async (username: string) => (await t.db.select().from(users).where(eq(users.username, username)))[0];

  beforeAll(async () => {
    [main, emea] = await Promise.all([
      startSlapd(
        [
          { uid: "alice", password: "alice-main-pw" },
          { uid: "sam", password: "sam-main-pw" },
        ],
        [{ cn: "netops", members: ["alice", "sam"] }],
      ),
      startSlapd(
        [
          { uid: "yusuf", password: "yusuf-emea-pw", mail: "yusuf@emea.test" },
          { uid: "sam", password: "sam-emea-pw" },
          { uid: "zara", password: "zara-emea-pw" },
        ],
        [
          { cn: "emea-netops", members: ["yusuf", "sam"] },
          // yusuf too: groupOfNames must keep a member when zara leaves.
          { cn: "emea-helpdesk", members: ["zara", "yusuf"] },
        ],
      ),
    ]);
    t = await createWebTestContext({ clock });
    admin = await t.token();
    const res = await patch({
      enabled: true,
      ...directory(main, { netops: "operator" }),
      bind_password: SERVICE_PASSWORD,
      directories: [emeaEntry({ bind_password: EMEA_BIND_PASSWORD })],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The emea server's service account has the test helper's password; the stored one is changed to it below.
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([main?.close(), emea?.close()]);
  });

  it("shows each directory with its bind password write-only, sealed, and kept when the list is sent again", async () => {
    const shown = await t.call("/api/v1/settings", { token: admin });
    expect(shown.body.data.ldap.directories).toEqual([
      expect.objectContaining({ name: "emea", enabled: true, url: emea.ldapsUrl, has_bind_password: true }),
    ]);
    expect(JSON.stringify(shown.body)).not.toContain(EMEA_BIND_PASSWORD);
    const [row] = await t.db.select().from(appSettings);
    expect(JSON.stringify(row)).not.toContain(EMEA_BIND_PASSWORD);
    const log = await t.db.select().from(activityLog).where(eq(activityLog.action, "settings.update"));
    expect(JSON.stringify(log)).not.toContain(EMEA_BIND_PASSWORD);
    expect(log.at(-1)!.changes).toMatchObject({
      "ldap.directories.emea.bind_password": { old: "[hidden]", new: "[changed]" },
    });

    // The right password now; then the list sent again without it keeps it.
    expect((await patch({ directories: [emeaEntry({ bind_password: SERVICE_PASSWORD })] })).status).toBe(200);
    const again = await patch({ directories: [emeaEntry({ timeout_seconds: 5 })] });
    expect(again.status).toBe(200);
    expect(again.body.data.ldap.directories[0]).toMatchObject({ has_bind_password: true, timeout_seconds: 5 });
  });

  it("refuses a list with a name twice, an enabled entry without a url, an unknown role and the reserved name", async () => {
    const twice = await patch({ directories: [emeaEntry(), emeaEntry()] });
    expect(twice.status).toBe(422);
    expect(twice.body.errors["ldap.directories.1.name"]).toEqual(["ldap.directories.1.name 'emea' is named twice"]);
    const noUrl = await patch({
      directories: [{ name: "apac", user_base: "ou=people", group_roles: { x: "viewer" } }],
    });
    expect(noUrl.status).toBe(422);
    expect(noUrl.body.errors["ldap.directories.0.url"][0]).toContain("ldap.directories.0.url is needed");
    const role = await patch({ directories: [emeaEntry({ group_roles: { "emea-netops": "no-such-role" } })] });
    expect(role.status).toBe(422);
    expect(role.body.errors["ldap.directories.0.group_roles"][0]).toContain("which does not exist");
    const reserved = await patch({ directories: [emeaEntry({ name: "main" })] });
    expect(reserved.status).toBe(422);
    // Nothing of the refused lists was stored.
    const shown = await t.call("/api/v1/settings", { token: admin });
    expect(shown.body.data.ldap.directories.map((d: { name: string }) => d.name)).toEqual(["emea"]);
  });

  it("signs in a user only the second directory knows, with that directory's mapping, and says which directory", async () => {
    expect((await t.client().login("yusuf", "yusuf-emea-pw")).status).toBe(303);
    const yusuf = await userRow("yusuf");
    expect(yusuf).toMatchObject({ authSource: "ldap", email: "yusuf@emea.test", enabled: true });
    expect((await t.call(`/api/v1/users/${yusuf!.id}`, { token: admin })).body.data.role).toBe("operator");
    expect(await eventsOf("user.login")).toContainEqual(
      expect.objectContaining({ username: "yusuf", method: "ldap", directory: "emea" }),
    );
    expect((await t.client().login("alice", "alice-main-pw")).status).toBe(303);
    expect(await eventsOf("user.login")).toContainEqual(
      expect.objectContaining({ username: "alice", method: "ldap", directory: "main" }),
    );
  });

  it("gives a name both directories hold to the first: the second's password does not open it", async () => {
    const refused = await t.client().login("sam", "sam-emea-pw");
    expect(refused.status).toBe(401);
    expect(await eventsOf("user.login_failed")).toContainEqual(
      expect.objectContaining({ username: "sam", reason: "wrong password" }),
    );
    expect((await t.client().login("sam", "sam-main-pw")).status).toBe(303);
  });

  it("re-reads a second directory's user from that directory after the refresh interval", async () => {
    const browser = t.client();
    expect((await browser.login("zara", "zara-emea-pw")).status).toBe(303);
    expect((await browser.get("/dashboard")).status).toBe(200);
    await emea.setMember("emea-helpdesk", "zara", false);
    clock.advance(14 * 60_000);
    expect((await browser.get("/dashboard")).status).toBe(200); // groups are trusted for 15 minutes
    clock.advance(2 * 60_000);
    const after = await browser.get("/dashboard");
    expect(after.status).toBe(302);
    expect(after.headers.get("location")).toMatch(/^\/login/);
    expect(await userRow("zara")).toMatchObject({ enabled: false });
    expect(await eventsOf("user.role_mapped")).toContainEqual(
      expect.objectContaining({ username: "zara", old_role: "viewer", new_role: null }),
    );
  });

  it("answers 'directory down' while a directory before the user's cannot be asked; the earlier ones' users go on", async () => {
    await emea.stop();
    try {
      const down = await t.client().login("yusuf", "yusuf-emea-pw");
      expect(down.status).toBe(503);
      // The main directory finds alice before the stopped one is asked.
      expect((await t.client().login("alice", "alice-main-pw")).status).toBe(303);
    } finally {
      await emea.start();
    }
    await main.stop();
    try {
      // The main directory might hold yusuf too: the second is not asked in its place.
      expect((await t.client().login("yusuf", "yusuf-emea-pw")).status).toBe(503);
    } finally {
      await main.start();
    }
    expect((await t.client().login("yusuf", "yusuf-emea-pw")).status).toBe(303);
  });

  it("turns one directory off without the others: a disabled entry is not asked", async () => {
    expect((await patch({ directories: [emeaEntry({ enabled: false })] })).status).toBe(200);
    expect((await t.client().login("yusuf", "yusuf-emea-pw")).status).toBe(401);
    expect((await patch({ enabled: false, directories: [emeaEntry({ enabled: true })] })).status).toBe(200);
    // The main directory off, the second alone still signs its users in.
    expect((await t.client().login("yusuf", "yusuf-emea-pw")).status).toBe(303);
    expect((await t.client().login("alice", "alice-main-pw")).status).toBe(401);
    expect((await patch({ enabled: true })).status).toBe(200);
  });

  it("svc ldap:test and ldap:user ask the directory named by --directory", async () => {
    const env = { STORAGE_DIR: t.dir, APP_KEY: TEST_APP_KEY };
    const tested = await svc(["ldap:test", "--directory", "emea"], env);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toContain(`Connected to ${emea.ldapsUrl}`);
    const user = await svc(["ldap:user", "yusuf", "--directory", "emea"], env);
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout).toContain("Role:   operator");
    const inMain = await svc(["ldap:user", "yusuf"], env);
    expect(inMain.code).not.toBe(0);
    expect(inMain.stderr).toContain("finds no entry for 'yusuf'");
    const unknown = await svc(["ldap:test", "--directory", "apac"], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no enabled directory is named 'apac'; enabled: main, emea");
  }, 180_000);
});
