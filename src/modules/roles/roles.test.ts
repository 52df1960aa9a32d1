import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createTestContext, TEST_PASSWORD, type TestContext } from "../../../test/helpers/app.ts";
import { ABILITIES } from "../../platform/auth/abilities.ts";
import { BUILTIN_ROLES } from "../../platform/auth/roles.ts";
import { activityLog, categories } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
let tagId: number;
let categoryId: number;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  tagId = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "ams" } })).body.data.id;
  const now = new Date();
  [{ id: categoryId }] = (await t.db
    .insert(categories)
    .values({ name: "Firewalls", nameKey: nameKey("Firewalls"), createdAt: now, updatedAt: now })
    .returning({ id: categories.id })) as [{ id: number }];
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>, token = admin) =>
  t.call("/api/v1/roles", { method: "POST", token, body });
const ROLE_FIELDS = [
  "id",
  "name",
  "description",
  "builtin",
  "permissions",
  "scope",
  "users_count",
  "created_at",
  "updated_at",
];

describe("roles: built-ins", () => {
  it("lists admin, operator and viewer first, with their permissions", async () => {
    const res = await t.call("/api/v1/roles?filter[builtin]=true", { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { name: string }) => r.name)).toEqual(["admin", "operator", "viewer"]);
    const byName = Object.fromEntries(res.body.data.map((r: { name: string }) => [r.name, r]));
    for (const builtin of BUILTIN_ROLES) expect(byName[builtin.name].permissions).toEqual(builtin.permissions);
    expect(byName.admin).toMatchObject({ builtin: true, scope: { all: true, tag_ids: [], category_ids: [] } });
    expect(byName.admin.users_count).toBeGreaterThanOrEqual(1);
    expect(Object.keys(byName.admin).sort()).toEqual([...ROLE_FIELDS].sort());
  });

  it("are read-only: updates and deletes answer 403", async () => {
    const roles = (await t.call("/api/v1/roles?filter[builtin]=true", { token: admin })).body.data as {
      id: number;
      name: string;
    }[];
    for (const role of roles) {
      const message = `built-in role ${role.name} is read-only; create a custom role`;
      for (const [method, body] of [
        ["PATCH", { description: "mine now" }],
        ["PUT", { name: role.name, permissions: [] }],
        ["DELETE", undefined],
      ] as const) {
        const res = await t.call(`/api/v1/roles/${role.id}`, { method, token: admin, body });
        expect(res, `${method} ${role.name}`).toMatchObject({ status: 403, body: { message } });
      }
    }
    const bulk = await t.call("/api/v1/roles/bulk", { method: "DELETE", token: admin, body: { ids: [roles[2]!.id] } });
    expect(bulk.status).toBe(403);
    const viewer = (await t.call(`/api/v1/roles/${roles[2]!.id}`, { token: admin })).body.data;
    expect(viewer.description).toBe(BUILTIN_ROLES[2]!.description);
  });
});

describe("roles: custom", () => {
  it("creates, shows, updates and deletes a custom role", async () => {
    const res = await create({
      name: "ams-ops",
      description: "Amsterdam operators",
      permissions: ["configs.read", "devices.write", "devices.read", "devices.read"],
      scope: { tag_ids: [tagId], category_ids: [categoryId] },
    });
    expect(res.status).toBe(201);
    const id = res.body.data.id;
    expect(res.headers.get("location")).toMatch(new RegExp(`/api/v1/roles/${id}$`));
    expect(res.body.data).toMatchObject({
      name: "ams-ops",
      description: "Amsterdam operators",
      builtin: false,
      users_count: 0,
      permissions: ["devices.read", "devices.write", "configs.read"], // catalogue order, once each
      scope: { all: false, tag_ids: [tagId], category_ids: [categoryId] },
    });
    expect((await t.call(`/api/v1/roles/${id}`, { token: admin })).body).toEqual(res.body);

    // a user of the role sees only the scoped devices
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "ams-rtr-01", device_ip: "192.0.2.1", device_vendor: "Cisco", device_tags: ["ams"] },
    });
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "lon-rtr-01", device_ip: "192.0.2.2", device_vendor: "Cisco" },
    });
    const member = await t.token(["devices.read"], { role: "ams-ops" });
    expect(
      (await t.call("/api/v1/devices", { token: member })).body.data.map((d: { device_name: string }) => d.device_name),
    ).toEqual(["ams-rtr-01"]);

    const patched = await t.call(`/api/v1/roles/${id}`, {
      method: "PATCH",
      token: admin,
      body: { scope: { all: true } },
    });
    expect(patched.body.data).toMatchObject({
      description: "Amsterdam operators",
      scope: { all: true, tag_ids: [], category_ids: [] },
      users_count: 1,
    });
    expect((await t.call("/api/v1/devices", { token: member })).body.meta.total).toBe(2);

    const put = await t.call(`/api/v1/roles/${id}`, {
      method: "PUT",
      token: admin,
      body: { name: "ams-ops", permissions: ["devices.read"] },
    });
    expect(put.body.data).toMatchObject({ description: "", permissions: ["devices.read"], scope: { all: true } });

    const actions = (
      await t.db
        .select()
        .from(activityLog)
        .where(and(eq(activityLog.subjectType, "role"), eq(activityLog.subjectId, id)))
    ).map((r) => r.action);
    expect(actions).toEqual(["role.create", "role.update", "role.update"]);
  });

  it("refuses to delete a role users hold, naming how many", async () => {
    const id = (await create({ name: "held", permissions: ["devices.read"] })).body.data.id;
    const a = await t.user({ role: "held" });
    await t.user({ role: "held" });
    const res = await t.call(`/api/v1/roles/${id}`, { method: "DELETE", token: admin });
    expect(res).toMatchObject({
      status: 409,
      body: { message: "Role 'held' is held by 2 users; give them another role first" },
    });
    const bulk = await t.call("/api/v1/roles/bulk", { method: "DELETE", token: admin, body: { ids: [id] } });
    expect(bulk.status).toBe(409);

    await t.call(`/api/v1/users/${a}`, { method: "DELETE", token: admin });
    expect((await t.call(`/api/v1/roles/${id}`, { method: "DELETE", token: admin })).body.message).toBe(
      "Role 'held' is held by 1 user; give them another role first",
    );
  });

  it("deletes unused roles, one or many", async () => {
    const a = (await create({ name: "temp-a", permissions: [] })).body.data.id;
    const b = (await create({ name: "temp-b", permissions: [] })).body.data.id;
    const c = (await create({ name: "temp-c", permissions: [] })).body.data.id;
    expect((await t.call(`/api/v1/roles/${a}`, { method: "DELETE", token: admin })).body.message).toBe(
      `Role ${a} deleted`,
    );
    expect((await t.call(`/api/v1/roles/${a}`, { token: admin })).status).toBe(404);
    expect(
      (await t.call("/api/v1/roles/bulk", { method: "DELETE", token: admin, body: { ids: [b, 99999] } })).status,
    ).toBe(422);
    expect(
      (await t.call("/api/v1/roles/bulk", { method: "DELETE", token: admin, body: { ids: [b, c] } })).body.message,
    ).toBe("Deleted 2 roles");
  });
});

describe("roles: validation", () => {
  it("refuses unknown abilities, listing the catalogue", async () => {
    const res = await create({ name: "bad", permissions: ["devices.read", "roles.write", "everything"] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      permissions: [`permissions has unknown abilities roles.write, everything; use any of: ${ABILITIES.join(", ")}`],
    });
  });

  it("requires name and permissions, keeps names unique in any case", async () => {
    expect((await create({})).body.errors).toEqual({
      name: ["name is required"],
      permissions: ["permissions is required"],
    });
    expect((await create({ name: "  ", permissions: [] })).body.errors).toEqual({ name: ["name must not be empty"] });
    expect((await create({ name: "ADMIN", permissions: [] })).body.errors).toEqual({
      name: ["name 'ADMIN' is already taken"],
    });
  });

  it("checks that the scope's tags and categories exist, and that all excludes them", async () => {
    const res = await create({
      name: "scoped",
      permissions: [],
      scope: { tag_ids: [tagId, 99999], category_ids: [88888] },
    });
    expect(res.body.errors).toEqual({
      "scope.tag_ids": ["scope.tag_ids has ids that are not tags: 99999"],
      "scope.category_ids": ["scope.category_ids has ids that are not categories: 88888"],
    });
    const both = await create({ name: "scoped", permissions: [], scope: { all: true, tag_ids: [tagId] } });
    expect(both.body.errors).toEqual({
      "scope.all": ["scope.all must be false when scope.tag_ids or scope.category_ids are given"],
    });
    const types = await create({ name: "scoped", permissions: "devices.read", scope: { tag_ids: ["ams"] } });
    expect(Object.keys(types.body.errors).sort()).toEqual(["permissions", "scope.tag_ids.0"]);
    // all: false with nothing named is a role that sees no devices: allowed
    expect(
      (await create({ name: "no-devices", permissions: ["users.read"], scope: { all: false } })).body.data.scope,
    ).toEqual({ all: false, tag_ids: [], category_ids: [] });
  });
});

describe("roles: privilege", () => {
  let helpdesk: string;
  beforeAll(async () => {
    await t.role({ name: "helpdesk", permissions: ABILITIES.filter((a) => a !== "system.write") });
    helpdesk = await t.token(ABILITIES, { role: "helpdesk" });
  });

  it("cannot create or widen a role beyond its own permissions", async () => {
    const res = await create({ name: "sneaky", permissions: ["devices.read", "system.write"] }, helpdesk);
    expect(res).toMatchObject({
      status: 403,
      body: {
        message: "A role you create or change cannot grant more than you hold: your role 'helpdesk' lacks system.write",
      },
    });
    const ok = await create({ name: "modest", permissions: ["devices.read", "users.write"] }, helpdesk);
    expect(ok.status).toBe(201);
    const widen = await t.call(`/api/v1/roles/${ok.body.data.id}`, {
      method: "PATCH",
      token: helpdesk,
      body: { permissions: ["system.write"] },
    });
    expect(widen.status).toBe(403);
    expect((await t.call(`/api/v1/roles/${ok.body.data.id}`, { token: admin })).body.data.permissions).toEqual([
      "devices.read",
      "users.write",
    ]);
  });

  it("cannot change or delete a role that grants more than it holds", async () => {
    const strong = (await create({ name: "strong", permissions: ["system.write"] })).body.data.id;
    const lacks = "grants more than you hold (your role 'helpdesk' lacks system.write)";
    const patch = await t.call(`/api/v1/roles/${strong}`, {
      method: "PATCH",
      token: helpdesk,
      body: { permissions: ["devices.read"] },
    });
    expect(patch.body).toEqual({ success: false, message: `Role 'strong' ${lacks}; it cannot be changed by you` });
    const del = await t.call(`/api/v1/roles/${strong}`, { method: "DELETE", token: helpdesk });
    expect(del).toMatchObject({
      status: 403,
      body: { message: `Role 'strong' ${lacks}; it cannot be deleted by you` },
    });
  });

  it("a scoped user cannot create a role that sees devices outside their scope", async () => {
    await t.role({ name: "ams-admins", permissions: ["users.read", "users.write", "devices.read"], tags: ["ams"] });
    const scoped = await t.token(ABILITIES, { role: "ams-admins" });
    const wide = await create({ name: "everywhere", permissions: ["devices.read"] }, scoped);
    expect(wide).toMatchObject({
      status: 403,
      body: {
        message:
          "A role you create or change cannot grant more than you hold: your role 'ams-admins' lacks devices outside your scope",
      },
    });
    expect(
      (await create({ name: "ams-readers", permissions: ["devices.read"], scope: { tag_ids: [tagId] } }, scoped))
        .status,
    ).toBe(201);
    // nor hand out an all-devices role to a user
    const user = await t.call("/api/v1/users", {
      method: "POST",
      token: scoped,
      body: { username: "wide-viewer", email: "w@example.com", password: TEST_PASSWORD, role: "viewer" },
    });
    expect(user.status).toBe(403);
  });
});

describe("roles: list and abilities", () => {
  it("filters by permission and name, searches, sorts, trims fields, and rejects unknown names", async () => {
    const names = async (q: string) =>
      (await t.call(`/api/v1/roles${q}`, { token: admin })).body.data.map((r: { name: string }) => r.name);
    expect(await names("?filter[permission]=system.write&filter[builtin]=true")).toEqual(["admin"]);
    expect(await names("?filter[name]=Operator,VIEWER")).toEqual(["operator", "viewer"]);
    expect(await names("?search=read-only")).toEqual(["viewer"]);
    expect(await names("?sort=-name&filter[builtin]=true")).toEqual(["viewer", "operator", "admin"]);
    const page = await t.call("/api/v1/roles?per_page=2&fields=id,name", { token: admin });
    expect(page.body.meta).toMatchObject({ per_page: 2, current_page: 1, from: 1, to: 2 });
    expect(Object.keys(page.body.data[0])).toEqual(["id", "name"]);
    for (const q of ["filter[scope]=x", "sort=permissions", "fields=secret", "filter[builtin]=yes"]) {
      expect((await t.call(`/api/v1/roles?${q}`, { token: admin })).status, q).toBe(422);
    }
  });

  it("needs users.read to read and users.write to write", async () => {
    expect((await t.call("/api/v1/roles")).status).toBe(401);
    const devicesOnly = await t.token(["devices.read", "devices.write"]);
    expect((await t.call("/api/v1/roles", { token: devicesOnly })).status).toBe(403);
    const reader = await t.token(["users.read"]);
    expect((await t.call("/api/v1/roles", { token: reader })).status).toBe(200);
    const denied = await create({ name: "nope", permissions: [] }, reader);
    expect(denied).toMatchObject({ status: 403, body: { message: "Invalid ability provided" } });
  });
});
