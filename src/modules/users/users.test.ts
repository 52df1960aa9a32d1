import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { ABILITIES, type Ability } from "../../platform/auth/abilities.ts";
import { verifyPassword } from "../../platform/auth/passwords.ts";
import { issueToken } from "../../platform/auth/tokens.ts";
import { activityLog, apiTokens, users } from "../../db/schema/index.ts";
import { roleIdByName } from "../../runtime/seed.ts";

let t: TestContext;
let admin: string;
let adminUserId: number;
beforeAll(async () => {
  t = await createTestContext();
  adminUserId = await t.user({ username: "root-admin" });
  admin = await t.token(ABILITIES, { userId: adminUserId });
});
afterAll(() => t.close());

const USER_FIELDS = [
  "id",
  "username",
  "email",
  "role",
  "role_id",
  "enabled",
  "last_login_at",
  "auth_source",
  "second_factor",
  "created_at",
  "updated_at",
];
const PASSWORD = "a-long-passphrase-1";
let seq = 0;
const newUser = (overrides: Record<string, unknown> = {}) => {
  const username = `person${++seq}`;
  return { username, email: `${username}@example.com`, password: PASSWORD, role: "operator", ...overrides };
};
const create = (body: Record<string, unknown>, token = admin, version = "v1") =>
  t.call(`/api/${version}/users`, { method: "POST", token, body });
const tokenFor = async (userId: number, abilities: readonly Ability[] = ABILITIES) =>
  (await issueToken(t.db, { userId, name: `token of ${userId}`, abilities: [...abilities] }, new Date())).value;
const actionsFor = async (userId: number) =>
  (await t.db.select().from(activityLog).where(eq(activityLog.subjectId, userId)))
    .filter((r) => r.subjectType === "user")
    .map((r) => r.action);

describe("users: create, show, update", () => {
  it("creates a user with a hashed password and shows it without any secret", async () => {
    const body = newUser({ username: "jdoe", email: "jdoe@example.com" });
    const res = await create(body);
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    expect(res.headers.get("location")).toMatch(new RegExp(`/api/v1/users/${id}$`));
    expect(Object.keys(res.body.data).sort()).toEqual([...USER_FIELDS].sort());
    expect(res.body.data).toMatchObject({
      username: "jdoe",
      email: "jdoe@example.com",
      role: "operator",
      role_id: await roleIdByName(t.db, "operator"),
      enabled: true,
      last_login_at: null,
    });
    expect((await t.call(`/api/v1/users/${id}`, { token: admin })).body).toEqual(res.body);

    const [row] = await t.db.select().from(users).where(eq(users.id, id));
    expect(row!.passwordHash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, row!.passwordHash)).toBe(true);
    expect(await actionsFor(id)).toEqual(["user.create"]);
  });

  it("accepts the role by id, PATCHes only what is sent and PUT needs username, email and role", async () => {
    const viewerId = await roleIdByName(t.db, "viewer");
    const { body } = await create(newUser({ role: undefined, role_id: viewerId }));
    const id = body.data.id;
    expect(body.data.role).toBe("viewer");

    const patched = await t.call(`/api/v1/users/${id}`, {
      method: "PATCH",
      token: admin,
      body: { email: "changed@example.com" },
    });
    expect(patched.body.data).toMatchObject({
      username: body.data.username,
      email: "changed@example.com",
      role: "viewer",
    });

    const noRole = await t.call(`/api/v1/users/${id}`, {
      method: "PUT",
      token: admin,
      body: { username: body.data.username, email: "x@example.com" },
    });
    expect(noRole.status).toBe(422);
    expect(noRole.body.errors).toEqual({ role_id: ["role_id is required (or role, the role's name)"] });

    const put = await t.call(`/api/v1/users/${id}`, {
      method: "PUT",
      token: admin,
      body: { username: "renamed.user", email: "x@example.com", role: "Operator" },
    });
    expect(put.body.data).toMatchObject({ username: "renamed.user", email: "x@example.com", role: "operator" });
    const [row] = await t.db.select().from(users).where(eq(users.id, id));
    expect(await verifyPassword(PASSWORD, row!.passwordHash)).toBe(true); // PUT without a password keeps it
    expect(await actionsFor(id)).toEqual(["user.create", "user.update", "user.update"]);
  });

  it("answers 404 for an unknown user", async () => {
    for (const [method, path] of [
      ["GET", "/users/99999"],
      ["PATCH", "/users/99999"],
      ["DELETE", "/users/99999"],
      ["POST", "/users/99999/disable"],
    ]) {
      const res = await t.call(`/api/v1${path}`, {
        method,
        token: admin,
        body: method === "GET" || method === "DELETE" ? undefined : {},
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.message).toBe("User 99999 not found");
    }
  });
});

describe("users: validation", () => {
  it("names every missing field on create", async () => {
    const res = await create({});
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ username: ["username is required"], email: ["email is required"] });
    const noPassword = await create({ username: "nopass", email: "nopass@example.com" });
    expect(noPassword.body.errors).toEqual({
      password: ["password is required"],
      role_id: ["role_id is required (or role, the role's name)"],
    });
  });

  it("checks username, email and password shapes", async () => {
    for (const username of ["ab", "has space", "x".repeat(65), "semi;colon"]) {
      const res = await create(newUser({ username }));
      expect(res.body.errors, username).toEqual({
        username: ["username must be 3-64 letters, digits, '.', '_' or '-'"],
      });
    }
    expect((await create(newUser({ username: "a.b_c-9" }))).status).toBe(201);
    expect((await create(newUser({ email: "not-an-email" }))).body.errors).toEqual({
      email: ["email must be an email address"],
    });
    expect((await create(newUser({ password: "elevenchars" }))).body.errors).toEqual({
      password: ["password must be at least 12 characters"],
    });
    expect((await create(newUser({ password: "twelve-chars" }))).status).toBe(201);
  });

  it("keeps usernames and emails unique in any case", async () => {
    await create(newUser({ username: "Unique.One", email: "unique.one@example.com" }));
    const res = await create(newUser({ username: "unique.one", email: "UNIQUE.ONE@example.com" }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      username: ["username 'unique.one' is already taken"],
      email: ["email 'UNIQUE.ONE@example.com' is already taken"],
    });
  });

  it("refuses unknown roles, listing the existing ones, and two different roles at once", async () => {
    const byName = await create(newUser({ role: "wizard" }));
    expect(byName.status).toBe(422);
    expect(byName.body.errors.role[0]).toMatch(
      /^role 'wizard' does not exist; use one of: admin \(\d+\), operator \(\d+\), viewer \(\d+\)/,
    );
    const byId = await create(newUser({ role: undefined, role_id: 99999 }));
    expect(byId.body.errors.role_id[0]).toMatch(/^role_id 99999 is not an existing role; use one of: admin/);
    const both = await create(newUser({ role: "viewer", role_id: await roleIdByName(t.db, "admin") }));
    expect(Object.keys(both.body.errors)).toEqual(["role"]);
    const same = await create(newUser({ role: "viewer", role_id: await roleIdByName(t.db, "viewer") }));
    expect(same.status).toBe(201);
  });
});

describe("users: enable, disable, password", () => {
  it("a disabled user's token answers 401 on the very next request, and works again once enabled", async () => {
    const id = (await create(newUser())).body.data.id;
    const token = await tokenFor(id, ["devices.read"]);
    expect((await t.call("/api/v1/devices", { token })).status).toBe(200);

    const disabled = await t.call(`/api/v1/users/${id}/disable`, { method: "POST", token: admin });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.enabled).toBe(false);
    const refused = await t.call("/api/v1/devices", { token });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ success: false, message: "Unauthorized" });

    // disabling twice changes nothing and records nothing
    expect((await t.call(`/api/v1/users/${id}/disable`, { method: "POST", token: admin })).body.data.enabled).toBe(
      false,
    );
    expect(
      (await t.call(`/api/v1/users?filter[id]=${id}&filter[enabled]=false`, { token: admin })).body.meta.total,
    ).toBe(1);

    expect((await t.call(`/api/v1/users/${id}/enable`, { method: "POST", token: admin })).body.data.enabled).toBe(true);
    expect((await t.call("/api/v1/devices", { token })).status).toBe(200);
    expect(await actionsFor(id)).toEqual(["user.create", "user.disable", "user.enable"]);
  });

  it("refuses to disable or delete oneself with 409", async () => {
    const disable = await t.call(`/api/v1/users/${adminUserId}/disable`, { method: "POST", token: admin });
    expect(disable.status).toBe(409);
    expect(disable.body.message).toBe("You cannot disable your own user (root-admin); ask another administrator");
    const del = await t.call(`/api/v1/users/${adminUserId}`, { method: "DELETE", token: admin });
    expect(del.status).toBe(409);
    expect(del.body.message).toBe("You cannot delete your own user (root-admin); ask another administrator");
    expect((await t.call("/api/v1/users", { token: admin })).status).toBe(200);
  });

  it("changes a password, audited as user.password_change without the value", async () => {
    const id = (await create(newUser())).body.data.id;
    const newPassword = "brand-new-passphrase-42";
    const res = await t.call(`/api/v1/users/${id}/password`, {
      method: "POST",
      token: admin,
      body: { password: newPassword },
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toMatch(/^Password of user 'person\d+' changed$/);
    const [row] = await t.db.select().from(users).where(eq(users.id, id));
    expect(await verifyPassword(newPassword, row!.passwordHash)).toBe(true);
    const [entry] = await t.db
      .select()
      .from(activityLog)
      .where(and(eq(activityLog.action, "user.password_change"), eq(activityLog.subjectId, id)));
    expect(entry).toMatchObject({ subjectType: "user", subjectId: id, userId: adminUserId, changes: {} });

    const short = await t.call(`/api/v1/users/${id}/password`, {
      method: "POST",
      token: admin,
      body: { password: "short" },
    });
    expect(short.body.errors).toEqual({ password: ["password must be at least 12 characters"] });
    expect(
      (await t.call(`/api/v1/users/${id}/password`, { method: "POST", token: admin, body: {} })).body.errors,
    ).toEqual({ password: ["password is required"] });

    // a password sent with PATCH is a password change too
    await t.call(`/api/v1/users/${id}`, { method: "PATCH", token: admin, body: { password: "third-passphrase-xyz" } });
    expect(await actionsFor(id)).toEqual([
      "user.create",
      "user.password_change",
      "user.password_change",
      "user.update",
    ]);
  });

  it("never returns a password or its hash, and never logs one", async () => {
    const body = newUser();
    const created = await create(body);
    const id = created.body.data.id;
    const answers = [
      created,
      await t.call(`/api/v1/users/${id}`, { token: admin }),
      await t.call("/api/v1/users?per_page=500", { token: admin }),
      await t.call(`/api/v2/users/${id}`, { token: admin }),
      await t.call(`/api/v1/users/${id}`, {
        method: "PATCH",
        token: admin,
        body: { password: "patched-passphrase-1" },
      }),
      await t.call(`/api/v1/users/${id}`, {
        method: "PUT",
        token: admin,
        body: { ...body, password: "put-passphrase-0001" },
      }),
      await t.call(`/api/v1/users/${id}/password`, {
        method: "POST",
        token: admin,
        body: { password: "posted-passphrase-1" },
      }),
      await t.call(`/api/v1/users/${id}/disable`, { method: "POST", token: admin }),
      await t.call(`/api/v1/users/${id}/enable`, { method: "POST", token: admin }),
      await t.call("/api/v1/activity-logs?per_page=500", { token: admin }),
    ];
    const [row] = await t.db.select().from(users).where(eq(users.id, id));
    const logged = JSON.stringify(await t.db.select().from(activityLog));
    for (const text of [...answers.map((a) => JSON.stringify(a.body)), logged]) {
      for (const secret of [
        PASSWORD,
        "patched-passphrase-1",
        "put-passphrase-0001",
        "posted-passphrase-1",
        row!.passwordHash,
        "pbkdf2",
        "password_hash",
      ]) {
        expect(text).not.toContain(secret);
      }
    }
    for (const a of answers.slice(0, 2)) expect(Object.keys(a.body.data)).not.toContain("password");
  });
});

describe("users: delete", () => {
  it("deletes the user with their API tokens, says how many, and keeps their name in the activity log", async () => {
    const id = (await create(newUser({ username: "leaver" }))).body.data.id;
    const token = await tokenFor(id, ["tags.write"]);
    await tokenFor(id, ["devices.read"]);
    expect((await t.call("/api/v1/tags", { method: "POST", token, body: { name: "made-by-leaver" } })).status).toBe(
      201,
    );

    const res = await t.call(`/api/v1/users/${id}`, { method: "DELETE", token: admin });
    expect(res).toMatchObject({
      status: 200,
      body: { message: `User ${id} deleted; their 2 API tokens were deleted too` },
    });
    expect(await t.db.select().from(apiTokens).where(eq(apiTokens.userId, id))).toEqual([]);
    expect((await t.call("/api/v1/tags", { token })).status).toBe(401);
    expect((await t.call(`/api/v1/users/${id}`, { token: admin })).status).toBe(404);
    const [entry] = await t.db.select().from(activityLog).where(eq(activityLog.action, "tag.create"));
    expect(entry).toMatchObject({ userId: id, username: "leaver" });
    expect(await actionsFor(id)).toEqual(["user.create", "user.delete"]);

    const plain = (await create(newUser())).body.data.id;
    expect((await t.call(`/api/v1/users/${plain}`, { method: "DELETE", token: admin })).body.message).toBe(
      `User ${plain} deleted; they had no API tokens`,
    );
  });

  it("bulk deletes all or nothing, and never the caller", async () => {
    const a = (await create(newUser())).body.data.id;
    const b = (await create(newUser())).body.data.id;
    await tokenFor(a);
    const unknown = await t.call("/api/v1/users/bulk", { method: "DELETE", token: admin, body: { ids: [a, 99999] } });
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors)).toEqual(["ids.1"]);
    const withSelf = await t.call("/api/v1/users/bulk", {
      method: "DELETE",
      token: admin,
      body: { ids: [a, adminUserId] },
    });
    expect(withSelf.status).toBe(409);
    expect((await t.call(`/api/v1/users/${a}`, { token: admin })).status).toBe(200);
    const ok = await t.call("/api/v1/users/bulk", { method: "DELETE", token: admin, body: { ids: [a, b] } });
    expect(ok.body.message).toBe("Deleted 2 users; their 1 API token was deleted too");
  });
});

describe("users: the last enabled admin", () => {
  it("cannot be deleted, disabled or given another role; a second admin lifts the rule", async () => {
    const fresh = await createTestContext();
    try {
      // The acting user holds a custom role with every ability, so they are not an admin themselves.
      await fresh.role({ name: "superuser" });
      const actor = await fresh.token(ABILITIES, { role: "superuser" });
      const onlyAdmin = await fresh.user({ username: "the-admin" });
      const last = "User 'the-admin' is the last enabled admin; ";

      const del = await fresh.call(`/api/v1/users/${onlyAdmin}`, { method: "DELETE", token: actor });
      expect(del).toMatchObject({ status: 409, body: { message: `${last}enable or create another admin first` } });
      const bulk = await fresh.call("/api/v1/users/bulk", {
        method: "DELETE",
        token: actor,
        body: { ids: [onlyAdmin] },
      });
      expect(bulk.status).toBe(409);
      const disable = await fresh.call(`/api/v1/users/${onlyAdmin}/disable`, { method: "POST", token: actor });
      expect(disable).toMatchObject({ status: 409, body: { message: `${last}enable or create another admin first` } });
      const demote = await fresh.call(`/api/v1/users/${onlyAdmin}`, {
        method: "PATCH",
        token: actor,
        body: { role: "viewer" },
      });
      expect(demote).toMatchObject({ status: 409, body: { message: `${last}give another user the admin role first` } });

      const second = await fresh.call("/api/v1/users", {
        method: "POST",
        token: actor,
        body: { username: "second-admin", email: "s@example.com", password: PASSWORD, role: "admin" },
      });
      expect(second.status).toBe(201);
      expect((await fresh.call(`/api/v1/users/${onlyAdmin}/disable`, { method: "POST", token: actor })).status).toBe(
        200,
      );
      // now second-admin is the last enabled one
      expect(
        (await fresh.call(`/api/v1/users/${second.body.data.id}`, { method: "DELETE", token: actor })).status,
      ).toBe(409);
      expect((await fresh.call(`/api/v1/users/${onlyAdmin}`, { method: "DELETE", token: actor })).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});

describe("users: privilege", () => {
  // helpdesk: everything an operator may do, plus managing users; not system.write.
  const HELPDESK = ABILITIES.filter((a) => a !== "system.write");
  let helpdesk: string;
  beforeAll(async () => {
    await t.role({ name: "helpdesk", permissions: HELPDESK });
    helpdesk = await t.token(ABILITIES, { role: "helpdesk" });
  });

  it("cannot create an admin, but can create users whose role it covers", async () => {
    const res = await create(newUser({ role: "admin" }), helpdesk);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      "You cannot give role 'admin': it grants more than you hold (your role 'helpdesk' lacks system.write)",
    );
    expect((await create(newUser({ role: "operator" }), helpdesk)).status).toBe(201);
    expect((await create(newUser({ role: "helpdesk" }), helpdesk)).status).toBe(201);
  });

  it("cannot promote a user to admin, nor touch an admin's account", async () => {
    const operator = (await create(newUser({ role: "operator" }))).body.data.id;
    const promote = await t.call(`/api/v1/users/${operator}`, {
      method: "PATCH",
      token: helpdesk,
      body: { role: "admin" },
    });
    expect(promote.status).toBe(403);
    expect((await t.call(`/api/v1/users/${operator}`, { token: admin })).body.data.role).toBe("operator");

    const target = (await create(newUser({ role: "admin", username: "boss" }))).body.data.id;
    const lacks = "their role 'admin' grants more than you hold (your role 'helpdesk' lacks system.write)";
    const attempts = [
      ["PATCH", `/users/${target}`, { email: "mine@example.com" }, `You cannot change user 'boss': ${lacks}`],
      [
        "POST",
        `/users/${target}/password`,
        { password: "taken-over-pass" },
        `You cannot change the password of user 'boss': ${lacks}`,
      ],
      ["POST", `/users/${target}/disable`, undefined, `You cannot disable user 'boss': ${lacks}`],
      ["DELETE", `/users/${target}`, undefined, `You cannot delete user 'boss': ${lacks}`],
    ] as const;
    for (const [method, path, body, message] of attempts) {
      const res = await t.call(`/api/v1${path}`, { method, token: helpdesk, body });
      expect(res, `${method} ${path}`).toMatchObject({ status: 403, body: { message } });
    }
    expect(await actionsFor(target)).toEqual(["user.create"]);
  });

  it("uses the role's permissions, not just the token's: a users.write token of a viewer gets 403", async () => {
    const viewerToken = await t.token(["users.read", "users.write"], { role: "viewer" });
    expect((await t.call("/api/v1/users", { token: viewerToken })).status).toBe(200); // viewer grants every .read
    expect((await create(newUser(), viewerToken)).status).toBe(403);
  });
});

describe("users: abilities", () => {
  it("needs users.read to read and users.write to write", async () => {
    expect((await t.call("/api/v1/users")).status).toBe(401);
    const devicesOnly = await t.token(["devices.read", "devices.write"]);
    expect((await t.call("/api/v1/users", { token: devicesOnly })).body).toEqual({
      success: false,
      message: "Invalid ability provided",
      required_ability: "users.read",
    });
    const reader = await t.token(["users.read"]);
    expect((await t.call("/api/v1/users", { token: reader })).status).toBe(200);
    expect((await t.call(`/api/v1/users/${adminUserId}`, { token: reader })).status).toBe(200);
    for (const [method, path] of [
      ["POST", "/users"],
      ["PATCH", `/users/${adminUserId}`],
      ["DELETE", `/users/${adminUserId}`],
      ["POST", `/users/${adminUserId}/disable`],
      ["POST", `/users/${adminUserId}/password`],
    ]) {
      expect((await t.call(`/api/v1${path}`, { method, token: reader, body: {} })).status, `${method} ${path}`).toBe(
        403,
      );
    }
  });
});

describe("users: list", () => {
  let listCtx: TestContext;
  let token: string;
  beforeAll(async () => {
    listCtx = await createTestContext();
    token = await listCtx.token(ABILITIES, { userId: await listCtx.user({ username: "zz-lister" }) });
    for (const [username, role] of [
      ["alice", "viewer"],
      ["bob", "operator"],
      ["carol", "viewer"],
      ["dave", "viewer"],
      ["erin", "operator"],
    ]) {
      await listCtx.call("/api/v1/users", {
        method: "POST",
        token,
        body: { username, email: `${username}@corp.example`, password: PASSWORD, role },
      });
    }
    const erin = (await listCtx.call("/api/v1/users?filter[username]=erin", { token })).body.data[0].id;
    await listCtx.call(`/api/v1/users/${erin}/disable`, { method: "POST", token });
  });
  afterAll(() => listCtx.close());
  const names = async (q: string) =>
    (await listCtx.call(`/api/v1/users${q}`, { token })).body.data.map((u: { username: string }) => u.username);

  it("sorts by username by default and paginates", async () => {
    const page = await listCtx.call("/api/v1/users?per_page=2&page=2", { token });
    expect(page.body.data.map((u: { username: string }) => u.username)).toEqual(["carol", "dave"]);
    expect(page.body.meta).toEqual({ current_page: 2, per_page: 2, total: 6, last_page: 3, from: 3, to: 4 });
    expect(new URL(page.body.links.next).searchParams.get("page")).toBe("3");
    expect(await names("?sort=-username&per_page=2")).toEqual(["zz-lister", "erin"]);
  });

  it("filters by role, role_id, enabled, email and username, and searches", async () => {
    expect(await names("?filter[role]=VIEWER")).toEqual(["alice", "carol", "dave"]);
    expect(await names("?filter[role]=viewer,admin")).toEqual(["alice", "carol", "dave", "zz-lister"]);
    expect(await names(`?filter[role_id]=${await roleIdByName(listCtx.db, "operator")}`)).toEqual(["bob", "erin"]);
    expect(await names("?filter[enabled]=false")).toEqual(["erin"]);
    expect(await names("?filter[role]=operator&filter[enabled]=true")).toEqual(["bob"]);
    expect(await names("?filter[email]=Carol@Corp.Example")).toEqual(["carol"]);
    expect(await names("?search=corp.example&filter[role]=operator")).toEqual(["bob", "erin"]);
    expect(await names("?search=AR")).toEqual(["carol"]);
  });

  it("returns only the requested fields", async () => {
    const res = await listCtx.call("/api/v1/users?fields=id,username&per_page=1", { token });
    expect(Object.keys(res.body.data[0])).toEqual(["id", "username"]);
  });

  it("answers 422 for unknown filters, sorts, fields and bad filter values", async () => {
    for (const q of [
      "filter[password]=x",
      "sort=password_hash",
      "fields=password_hash",
      "filter[enabled]=maybe",
      "filter[role_id]=two",
    ]) {
      const res = await listCtx.call(`/api/v1/users?${q}`, { token });
      expect(res.status, q).toBe(422);
    }
    expect((await listCtx.call("/api/v1/users?filter[enabled]=maybe", { token })).body.message).toBe(
      "filter[enabled] must be true or false",
    );
  });
});

describe("users: v2", () => {
  it("serves the same user routes as v1", async () => {
    const { openApiDocument } = await import("../../adapters/api/versions.ts");
    const userOps = (version: "v1" | "v2") =>
      Object.entries(openApiDocument(version, "http://netkeep.test").paths ?? {})
        .filter(([path]) => path.startsWith("/api/" + version + "/users"))
        .flatMap(([path, item]) =>
          Object.keys(item as object).map((m) => `${m} ${path.replace(`/api/${version}`, "")}`),
        )
        .sort();
    expect(userOps("v1").length).toBe(13);
    expect(userOps("v2")).toEqual(userOps("v1"));
  });

  it("creates, shows, disables and deletes through /api/v2 exactly as v1", async () => {
    const created = await create(newUser(), admin, "v2");
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v2/users/${id}$`));
    expect((await t.call(`/api/v1/users/${id}`, { token: admin })).body).toEqual(
      (await t.call(`/api/v2/users/${id}`, { token: admin })).body,
    );
    const token = await tokenFor(id, ["devices.read"]);
    expect((await t.call(`/api/v2/users/${id}/disable`, { method: "POST", token: admin })).body.data.enabled).toBe(
      false,
    );
    expect((await t.call("/api/v2/devices", { token })).status).toBe(401);
    expect((await t.call(`/api/v2/users/${adminUserId}/disable`, { method: "POST", token: admin })).status).toBe(409);
    expect((await create(newUser({ password: "short" }), admin, "v2")).status).toBe(422);
    expect((await t.call(`/api/v2/users/${id}`, { method: "DELETE", token: admin })).body.message).toBe(
      `User ${id} deleted; their 1 API token was deleted too`,
    );
  });
});
