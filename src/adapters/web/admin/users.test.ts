import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityLog, roles, users } from "../../../db/schema/index.ts";
import {
  createWebTestContext,
  csrfIn,
  TEST_PASSWORD,
  type WebClient,
  type WebTestContext,
} from "../../../../test/web/client.ts";

/** Users and roles through the admin page: the API's services, checks and audit, behind CSRF. */
let t: WebTestContext;
let admin: WebClient;
let csrf: string;

const userNamed = async (username: string) => (await t.db.select().from(users).where(eq(users.username, username)))[0];

beforeAll(async () => {
  t = await createWebTestContext();
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
  csrf = csrfIn(await (await admin.get("/admin/users")).text())!;
});
afterAll(() => t.close());

describe("the users page", () => {
  it("creates a user with a role, who can then log in; the password is kept only as a hash", async () => {
    const res = await admin.postForm("/admin/users", {
      _csrf: csrf,
      username: "jdoe",
      email: "jdoe@example.test",
      password: "a-long-passphrase-1",
      role_id: "3",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/users?done=created");
    const row = await userNamed("jdoe");
    expect(row).toMatchObject({ email: "jdoe@example.test", roleId: 3, enabled: true });
    expect(row!.passwordHash).not.toContain("a-long-passphrase-1");
    expect((await t.client().login("jdoe", "a-long-passphrase-1")).status).toBe(303);
    // A new user's role starts at the least one (viewer), not at whatever role is listed first.
    expect(await (await admin.get("/admin/users")).text()).toMatch(
      /<select id="new-role" name="role_id">.*<option value="3" selected="">viewer<\/option>/,
    );
    const [entry] = await t.db.select().from(activityLog).where(eq(activityLog.action, "user.create"));
    expect(entry).toMatchObject({ username: "boss", tokenName: "web session", tokenId: null });
  });

  it("answers the API's 422 for a short password or a taken username, and creates nothing", async () => {
    const short = await admin.postForm("/admin/users", {
      _csrf: csrf,
      username: "shorty",
      email: "s@example.test",
      password: "short",
      role_id: "3",
    });
    expect(short.status).toBe(422);
    expect(await short.text()).toContain("password must be at least 12 characters");
    const taken = await admin.postForm("/admin/users", {
      _csrf: csrf,
      username: "JDOE",
      email: "other@example.test",
      password: "a-long-passphrase-2",
      role_id: "3",
    });
    expect(taken.status).toBe(422);
    expect(await userNamed("shorty")).toBeUndefined();
  });

  it("disables a user (ending their sessions) and enables them again, but not oneself", async () => {
    const jdoe = (await userNamed("jdoe"))!;
    const theirs = t.client();
    await theirs.login("jdoe", "a-long-passphrase-1");
    expect((await admin.postForm(`/admin/users/${jdoe.id}/disable`, { _csrf: csrf })).status).toBe(303);
    expect((await userNamed("jdoe"))!.enabled).toBe(false);
    expect((await theirs.get("/devices")).status).toBe(302);
    expect((await admin.postForm(`/admin/users/${jdoe.id}/enable`, { _csrf: csrf })).status).toBe(303);
    expect((await userNamed("jdoe"))!.enabled).toBe(true);
    const self = (await userNamed("boss"))!;
    expect((await admin.postForm(`/admin/users/${self.id}/disable`, { _csrf: csrf })).status).toBe(409);
  });

  it("resets a password and gives another role", async () => {
    const jdoe = (await userNamed("jdoe"))!;
    expect(
      (await admin.postForm(`/admin/users/${jdoe.id}/password`, { _csrf: csrf, password: "another-long-phrase" }))
        .status,
    ).toBe(303);
    expect((await t.client().login("jdoe", "a-long-passphrase-1")).status).not.toBe(303);
    expect((await t.client().login("jdoe", "another-long-phrase")).status).toBe(303);
    expect((await admin.postForm(`/admin/users/${jdoe.id}/role`, { _csrf: csrf, role_id: "2" })).status).toBe(303);
    expect((await userNamed("jdoe"))!.roleId).toBe(2);
  });

  it("sets a custom role's scope on its edit page, which then decides what its users see", async () => {
    const roleId = await t.role({ name: "edge-ops", permissions: ["devices.read"], tags: ["edge", "core"] });
    const [edge] = await t.db.select().from(roles).where(eq(roles.id, roleId));
    const res = await admin.postForm(`/admin/roles/${roleId}/edit`, {
      _csrf: csrf,
      name: "edge-ops",
      abilities: ["devices.read"],
      tag_ids: [String(edge!.scopeTagIds[0])],
    });
    expect(res.status).toBe(303);
    expect((await t.db.select().from(roles).where(eq(roles.id, roleId)))[0]).toMatchObject({
      scopeAll: false,
      scopeTagIds: [edge!.scopeTagIds[0]],
      scopeCategoryIds: [],
    });
    await admin.postForm(`/admin/roles/${roleId}/edit`, {
      _csrf: csrf,
      name: "edge-ops",
      abilities: ["devices.read"],
      all: "true",
    });
    expect((await t.db.select().from(roles).where(eq(roles.id, roleId)))[0]!.scopeAll).toBe(true);
    const builtin = await admin.postForm("/admin/roles/1/edit", {
      _csrf: csrf,
      name: "admin",
      abilities: ["devices.read"],
      all: "true",
    });
    expect(builtin.status).toBe(403);
  });

  it("refuses every write without the CSRF token, and the whole page to a role without users.read", async () => {
    const jdoe = (await userNamed("jdoe"))!;
    expect((await admin.postForm(`/admin/users/${jdoe.id}/disable`, { _csrf: "forged" })).status).toBe(403);
    expect((await userNamed("jdoe"))!.enabled).toBe(true);
    await t.user({ username: "op1", role: "operator" });
    const operator = t.client();
    await operator.login("op1", TEST_PASSWORD);
    expect((await operator.get("/admin/users")).status).toBe(403);
    const opCsrf = csrfIn(await (await operator.get("/devices")).text())!;
    expect(
      (
        await operator.postForm("/admin/users", {
          _csrf: opCsrf,
          username: "sneaky",
          email: "x@example.test",
          password: "a-long-passphrase-3",
          role_id: "1",
        })
      ).status,
    ).toBe(403);
    expect(await userNamed("sneaky")).toBeUndefined();
  });
});
