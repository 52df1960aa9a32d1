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
import { fillFilter, roleForGroups } from "./ldap.ts";

describe("directory filters", () => {
  it("escapes a value per RFC 4515, so typed text cannot add filter syntax", () => {
    // RFC 4515 section 3: '*' is \2a, '(' \28, ')' \29, '\' \5c, NUL \00.
    expect(fillFilter("(uid={username})", { username: "*)(uid=*" })).toBe("(uid=\\2a\\29\\28uid=\\2a)");
    expect(fillFilter("(member={dn})", { dn: "cn=Smith\\, John (IT),ou=people" })).toBe(
      "(member=cn=Smith\\5c, John \\28IT\\29,ou=people)",
    );
    expect(fillFilter("(&(uid={username})(x={other}))", { username: "a" })).toBe("(&(uid=a)(x={other}))");
  });

  it("gives the role of the first group_roles entry the user's groups hold, without case", () => {
    const map = { "NetKeep-Admins": "admin", netops: "operator", helpdesk: "viewer" };
    expect(roleForGroups(["helpdesk", "netops"], map)).toBe("operator");
    expect(roleForGroups(["netkeep-admins"], map)).toBe("admin");
    expect(roleForGroups(["printers"], map)).toBeNull();
  });
});

const unavailable = slapdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the real-slapd tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`src/platform/auth/directory/ldap.test.ts skipped: ${unavailable}`);
}

describe.skipIf(unavailable)("directory sign-in against OpenLDAP slapd", () => {
  let slapd: Slapd;
  let t: WebTestContext;
  let admin: string;
  const clock = manualClock(new Date("2026-06-01T09:00:00Z"));

  const people = [
    { uid: "alice", password: "alice-directory-pw", mail: "alice@example.test" },
    { uid: "bob", password: "bob-directory-pw" },
    { uid: "carol", password: "carol-directory-pw", mail: "carol@example.test" },
    { uid: "dave", password: "dave-directory-pw", disabled: true },
    { uid: "erin", password: "erin-directory-pw" },
    { uid: "frank", password: "frank-directory-pw" },
  ];
  const groups = [
    { cn: "netkeep-admins", members: [] },
    { cn: "netops", members: ["alice", "dave"] },
    { cn: "branch", members: ["bob"] },
    { cn: "helpdesk", members: ["carol", "frank"] },
    { cn: "printers", members: ["erin"] },
  ];

  const settings = (overrides: Record<string, unknown> = {}) => ({
    enabled: true,
    url: slapd.ldapsUrl,
    ca_certificate: slapd.caPem,
    allow_insecure: false,
    bind_dn: SERVICE_DN,
    bind_password: SERVICE_PASSWORD,
    user_base: `ou=people,${SUFFIX}`,
    user_filter: "(&(uid={username})(!(employeeType=disabled)))",
    group_base: `ou=groups,${SUFFIX}`,
    group_filter: "(member={dn})",
    group_roles: { "netkeep-admins": "admin", netops: "operator", branch: "branch-ops", helpdesk: "viewer" },
    group_refresh_minutes: 15,
    ...overrides,
  });
  const configure = async (overrides: Record<string, unknown> = {}) => {
    const res = await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { ldap: settings(overrides) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res;
  };
  const eventsOf = async (type: string) =>
    (await t.db.select().from(events).where(eq(events.type, type))).map((e) => e.payload as Record<string, unknown>);
  const userRow = async (username: string) => (await t.db.select().from(users).where(eq(users.username, username)))[0];
  const svcEnv = () => ({ STORAGE_DIR: t.dir, APP_KEY: TEST_APP_KEY });

  beforeAll(async () => {
    slapd = await startSlapd(people, groups);
    t = await createWebTestContext({ clock });
    await t.role({ name: "branch-ops", permissions: ["devices.read"], tags: ["branch"] });
    admin = await t.token();
    await configure();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await slapd?.close();
  });

  it("keeps the bind password write-only and sealed, and records it only as changed", async () => {
    const shown = await t.call("/api/v1/settings", { token: admin });
    expect(shown.body.data.ldap.has_bind_password).toBe(true);
    expect(JSON.stringify(shown.body)).not.toContain(SERVICE_PASSWORD);
    const stored = await t.db.select().from(appSettings);
    expect(stored[0]!.ldapBindPasswordEnc).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(SERVICE_PASSWORD);
    const log = await t.db.select().from(activityLog).where(eq(activityLog.action, "settings.update"));
    expect(JSON.stringify(log)).not.toContain(SERVICE_PASSWORD);
    expect(log.at(-1)!.changes).toMatchObject({ "ldap.bind_password": { old: "[hidden]", new: "[changed]" } });
  });

  it("signs a directory user in over LDAPS, creating them with the role their group maps to", async () => {
    const browser = t.client();
    const res = await browser.login("alice", "alice-directory-pw");
    expect(res.status).toBe(303);
    const alice = await userRow("alice");
    expect(alice).toMatchObject({ authSource: "ldap", email: "alice@example.test", enabled: true });
    expect((await t.call(`/api/v1/users/${alice!.id}`, { token: admin })).body.data).toMatchObject({
      role: "operator",
      auth_source: "ldap",
      second_factor: false,
    });
    expect(await eventsOf("user.login")).toContainEqual(expect.objectContaining({ username: "alice", method: "ldap" }));
    expect(await eventsOf("user.role_mapped")).toContainEqual({
      user_id: alice!.id,
      username: "alice",
      old_role: null,
      new_role: "operator",
      groups: ["netops"],
    });
    const logins = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.login"));
    expect(logins.some((l) => l.subjectId === alice!.id)).toBe(true);
    // The directory password is never a local one.
    expect(alice!.passwordHash).not.toContain("alice-directory-pw");
  });

  it("gives a mapped group's scope: a branch user's token sees only the branch's devices", async () => {
    for (const [name, tags] of [
      ["core-rtr-1", []],
      ["branch-sw-1", ["branch"]],
    ] as const) {
      const made = await t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: { device_name: name, device_ip: "192.0.2.10", device_vendor: "Cisco", device_tags: tags },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    expect((await t.client().login("bob", "bob-directory-pw")).status).toBe(303);
    const bob = await userRow("bob");
    const token = await t.token(["devices.read"], { userId: bob!.id });
    const seen = await t.call("/api/v1/devices", { token });
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((d: { device_name: string }) => d.device_name)).toEqual(["branch-sw-1"]);
  });

  it("refuses a wrong password, a disabled account, an unknown name and a user in no mapped group", async () => {
    const cases = [
      ["alice", "not-her-password", "wrong password"],
      ["dave", "dave-directory-pw", "unknown user"], // the user filter leaves disabled accounts out
      ["zoe", "whatever-password", "unknown user"],
      ["erin", "erin-directory-pw", "no group mapped to a role"],
    ] as const;
    for (const [username, password, reason] of cases) {
      const res = await t.client({ "x-test-client-ip": `198.51.100.${username.length}` }).login(username, password);
      expect(res.status, username).toBe(401);
      expect(await res.text()).toContain("Wrong username or password");
      expect(await eventsOf("user.login_failed")).toContainEqual(expect.objectContaining({ username, reason }));
    }
    // The activity log has each refusal too, with the name typed and the reason.
    const refusals = (await t.db.select().from(activityLog).where(eq(activityLog.action, "user.login_failed"))).map(
      (l) => l.changes as Record<string, { new: unknown }>,
    );
    for (const [username, , reason] of cases)
      expect(
        refusals.some((c) => c.username?.new === username && c.reason?.new === reason),
        username,
      ).toBe(true);
    expect(await userRow("erin")).toBeUndefined();
    expect(await userRow("dave")).toBeUndefined();
  });

  it("follows a user moved between groups after the refresh interval, and shuts out one removed from all", async () => {
    const browser = t.client();
    expect((await browser.login("carol", "carol-directory-pw")).status).toBe(303);
    const carol = (await userRow("carol"))!;
    const token = await t.token(["users.read"], { userId: carol.id });
    // A viewer: the administrators' settings page is refused, and users.read works.
    expect((await browser.get("/settings/restapi")).status).toBe(403);
    expect((await t.call("/api/v1/users", { token })).status).toBe(200);

    await slapd.setMember("helpdesk", "carol", false);
    await slapd.setMember("netkeep-admins", "carol", true);
    clock.advance(14 * 60_000);
    expect((await browser.get("/settings/restapi")).status).toBe(403); // groups are trusted for 15 minutes
    clock.advance(2 * 60_000);
    expect((await browser.get("/settings/restapi")).status).toBe(200);
    expect(await eventsOf("user.role_mapped")).toContainEqual(
      expect.objectContaining({ username: "carol", old_role: "viewer", new_role: "admin" }),
    );
    const mapped = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.role_mapped"));
    expect(mapped.at(-1)).toMatchObject({ subjectId: carol.id, changes: { role: { old: "viewer", new: "admin" } } });

    await slapd.setMember("netkeep-admins", "carol", false);
    clock.advance(16 * 60_000);
    const after = await browser.get("/settings/restapi");
    expect(after.status).toBe(302);
    expect(after.headers.get("location")).toMatch(/^\/login/);
    expect((await t.call("/api/v1/users", { token })).status).toBe(401);
    expect(await userRow("carol")).toMatchObject({ enabled: false });
    expect(await eventsOf("user.role_mapped")).toContainEqual(
      expect.objectContaining({ username: "carol", old_role: "admin", new_role: null }),
    );
    // Back in a group, she still needs an administrator to enable her again: the directory never re-enables.
    await slapd.setMember("helpdesk", "carol", true);
    expect((await t.client().login("carol", "carol-directory-pw")).status).toBe(401);
    expect(await eventsOf("user.login_failed")).toContainEqual(
      expect.objectContaining({ username: "carol", reason: "disabled user" }),
    );
  });

  it("says the directory is down, still lets local administrators in, and refuses a directory session due a re-read", async () => {
    const browser = t.client();
    expect((await browser.login("frank", "frank-directory-pw")).status).toBe(303);
    await t.user({ username: "breakglass" });
    await slapd.stop();
    try {
      const down = await t.client().login("alice", "alice-directory-pw");
      expect(down.status).toBe(503);
      expect(await down.text()).toContain("The directory cannot be reached right now");
      expect(await eventsOf("user.login_failed")).toContainEqual(
        expect.objectContaining({ username: "alice", reason: "directory unreachable" }),
      );
      expect((await t.client().login("breakglass")).status).toBe(303);
      clock.advance(16 * 60_000);
      expect((await browser.get("/dashboard")).status).toBe(302);
      // Refused for now, not disabled: the directory said nothing about frank.
      expect(await userRow("frank")).toMatchObject({ enabled: true });
    } finally {
      await slapd.start();
    }
    expect((await t.client().login("frank", "frank-directory-pw")).status).toBe(303);
  });

  it("never signs a directory user in with a local password, even with the directory off", async () => {
    const frank = (await userRow("frank"))!;
    const set = await t.call(`/api/v1/users/${frank.id}/password`, {
      method: "POST",
      token: admin,
      body: { password: "a-local-password-1" },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect((await t.client().login("frank", "a-local-password-1")).status).toBe(401);
    await configure({ enabled: false });
    try {
      expect((await t.client().login("frank", "a-local-password-1")).status).toBe(401);
      expect(await eventsOf("user.login_failed")).toContainEqual(
        expect.objectContaining({ username: "frank", reason: "directory sign-in is off" }),
      );
    } finally {
      await configure();
    }
  });

  it("locks out after repeated failures and records the lockout", async () => {
    const ip = { "x-test-client-ip": "203.0.113.77" };
    for (let i = 0; i < 5; i++) expect((await t.client(ip).login("alice", `wrong-${i}`)).status).toBe(401);
    const locked = await eventsOf("user.locked_out");
    expect(locked).toContainEqual({ username: "alice", ip: "203.0.113.77", retry_after_seconds: 30 });
    expect((await t.client(ip).login("alice", "alice-directory-pw")).status).toBe(429);
  });

  // Each `svc` run is a node process of its own (seconds on a busy machine): these tests get minutes, not 30 s.
  const SVC_TIMEOUT = 180_000;

  it(
    "uses StartTLS on ldap://, refuses an untrusted certificate, and goes plain only when allowed",
    async () => {
      try {
        await checkTransports();
      } finally {
        await configure();
      }
    },
    SVC_TIMEOUT,
  );

  async function checkTransports() {
    await configure({ url: slapd.ldapUrl });
    const ok = await svc(["ldap:test"], svcEnv());
    expect(ok.stdout, ok.stderr).toContain(
      `Connected to ${slapd.ldapUrl} (encryption: StartTLS) and bound as ${SERVICE_DN}.`,
    );
    expect(ok.code).toBe(0);
    expect((await t.client().login("alice", "alice-directory-pw")).status).toBe(303);

    await configure({ url: slapd.ldapsUrl, ca_certificate: null });
    const untrusted = await svc(["ldap:test"], svcEnv());
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toMatch(/TLS certificate netkeep does not trust .*ldap\.ca_certificate/);

    await configure({ url: slapd.ldapUrl, allow_insecure: true });
    const plain = await svc(["ldap:test"], svcEnv());
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Warning: directory connection without TLS");
    expect(plain.stdout).toContain("(encryption: none: plain LDAP");

    await configure({ bind_password: "not-the-password" });
    const refused = await svc(["ldap:test"], svcEnv());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`the directory refused the service account '${SERVICE_DN}'`);
    expect(refused.stderr + refused.stdout).not.toContain("not-the-password");
  }

  it(
    "svc ldap:user shows a user's groups and the role they map to",
    async () => {
      const alice = await svc(["ldap:user", "alice"], svcEnv());
      expect(alice.code, alice.stderr).toBe(0);
      expect(alice.stdout).toContain(`DN:     uid=alice,ou=people,${SUFFIX}`);
      expect(alice.stdout).toContain("Groups: netops");
      expect(alice.stdout).toContain("Role:   operator");
      const erin = await svc(["ldap:user", "erin"], svcEnv());
      expect(erin.stdout).toContain("Role:   none");
      const dave = await svc(["ldap:user", "dave"], svcEnv());
      expect(dave.code).not.toBe(0);
      expect(dave.stderr).toContain("finds no entry for 'dave'");
    },
    SVC_TIMEOUT,
  );
});
