/**
 * Names compare under one rule (src/db/name-key.ts): the uniqueness check and the unique index read the same
 * stored key, so a name differing only in non-ASCII case is refused with 422 naming the field, never a 500
 * from the index (SQLite's lower() folds ASCII only).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_PASSWORD, type TestContext } from "../../../test/helpers/app.ts";
import { nameKey } from "../../db/name-key.ts";
import { tags } from "../../db/schema/index.ts";
import { uniqueViolationError } from "./unique-violation.ts";

let t: TestContext;
let admin: string;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const TEMPLATE_CODE = "vendor: Cisco\nprompt: '[#>] ?$'\ncommands:\n  - show running-config\n";

/** Per resource kind: its path, the name field, and a valid create body around a name. */
const KINDS: { path: string; field: string; body: (name: string) => Record<string, unknown> }[] = [
  { path: "tags", field: "name", body: (name) => ({ name }) },
  { path: "categories", field: "name", body: (name) => ({ name }) },
  { path: "vendors", field: "name", body: (name) => ({ name }) },
  {
    path: "device-credentials",
    field: "cred_name",
    body: (name) => ({ cred_name: name, cred_username: "backup", cred_password: "a-long-password" }),
  },
  { path: "device-profiles", field: "name", body: (name) => ({ name }) },
  { path: "roles", field: "name", body: (name) => ({ name, permissions: ["devices.read"] }) },
  {
    path: "tasks",
    field: "task_name",
    body: (name) => ({ task_name: name, task_type: "download_all", task_cron: "0 3 * * *" }),
  },
  { path: "templates", field: "name", body: (name) => ({ name, code: TEMPLATE_CODE }) },
  {
    path: "devices",
    field: "device_name",
    body: (name) => ({ device_name: name, device_ip: "192.0.2.10", device_vendor: "Cisco" }),
  },
  // Usernames are ASCII by rule; the email is where a user's name can differ in non-ASCII case.
  {
    path: "users",
    field: "email",
    body: (name) => ({
      username: `u${name.length}${Math.random().toString(36).slice(2, 8)}`,
      email: `${name}@example.test`,
      password: TEST_PASSWORD,
      role: "viewer",
    }),
  },
];

describe("names differing only in non-ASCII case", () => {
  for (const kind of KINDS) {
    it(`${kind.path}: a second '${kind.field}' that folds to the first answers 422 naming the field`, async () => {
      const first = await t.call(`/api/v1/${kind.path}`, {
        method: "POST",
        token: admin,
        body: kind.body(`ÜBER-${kind.path}`),
      });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      for (const clash of [`über-${kind.path}`, `Über-${kind.path.toUpperCase()}`]) {
        const second = await t.call(`/api/v1/${kind.path}`, { method: "POST", token: admin, body: kind.body(clash) });
        expect(second.status, JSON.stringify(second.body)).toBe(422);
        expect(Object.keys(second.body.errors)).toContain(kind.field);
        expect(second.body.errors[kind.field][0]).toContain("is already taken");
      }
    });
  }

  it("folds composed and decomposed letters, ß and SS, and compatibility forms alike", async () => {
    const cases: [string, string][] = [
      ["Çdup", "çdup"],
      ["C\u0327dup2", "Çdup2"],
      ["straße", "STRASSE"],
      ["ﬁrewall", "FIREWALL"],
      ["ＡＢＣ-tag", "abc-tag"],
    ];
    for (const [a, b] of cases) {
      expect((await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: a } })).status).toBe(201);
      const clash = await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: b } });
      expect(clash.status, `${a} / ${b}`).toBe(422);
    }
  });

  it("a rename onto a name that folds the same is refused; renaming a row to its own name in another case is not", async () => {
    const a = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "Ölrohr" } })).body.data;
    const b = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "other-tag" } })).body.data;
    const onto = await t.call(`/api/v1/tags/${b.id}`, { method: "PATCH", token: admin, body: { name: "ÖLROHR" } });
    expect(onto.status).toBe(422);
    expect(onto.body.errors.name).toBeDefined();
    const own = await t.call(`/api/v1/tags/${a.id}`, { method: "PATCH", token: admin, body: { name: "ölrohr" } });
    expect(own.status).toBe(200);
    // The key moved with the rename: the old spelling's key is free only if it folds differently (it does not).
    expect((await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "ÖlRohr" } })).status).toBe(422);
  });

  it("filter[name] matches under the same rule", async () => {
    await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "Éclair" } });
    const found = await t.call(`/api/v1/tags?filter[name]=${encodeURIComponent("éCLAIR")}`, { token: admin });
    expect(found.body.data.map((r: { name: string }) => r.name)).toEqual(["Éclair"]);
  });

  it("device_tags reuse an existing tag whose name folds the same instead of failing on the index", async () => {
    await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "Straße-Nord" } });
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "tag-fold-dev",
        device_ip: "192.0.2.20",
        device_vendor: "Cisco",
        device_tags: ["STRASSE-NORD"],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.device_tags).toEqual(["Straße-Nord"]);
  });

  it("a CSV import row whose name folds onto an existing device's updates it rather than failing the file", async () => {
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "Ärger-sw", device_ip: "192.0.2.30", device_vendor: "Cisco" },
    });
    // Same non-ASCII letter, other ASCII case: SQLite's lower() made these equal for the index but not the lookup.
    const csv = "device_name,device_ip,device_vendor\nÄRGER-SW,192.0.2.31,Cisco\nnew-from-csv,192.0.2.32,Cisco\n";
    const res = await t.request("/api/v1/devices/import", {
      method: "POST",
      token: admin,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data.rows.map((r: { action: string }) => r.action)).toEqual(["update", "create"]);
    const devices = await t.call(`/api/v1/devices?filter[device_name]=${encodeURIComponent("ärger-sw")}`, {
      token: admin,
    });
    expect(devices.body.data.map((d: { device_ip: string }) => d.device_ip)).toEqual(["192.0.2.31"]);
  });

  it("a CSV import file with two rows that fold the same rejects the second row, not the file", async () => {
    const csv = "device_name,device_ip,device_vendor\nStraße-rtr,192.0.2.40,Cisco\nSTRASSE-RTR,192.0.2.41,Cisco\n";
    const res = await t.request("/api/v1/devices/import", {
      method: "POST",
      token: admin,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data.rows.map((r: { action: string }) => r.action)).toEqual(["create", "reject"]);
    expect(body.data.rows[1].errors.device_name[0]).toContain("repeats row 2");
  });
});

describe("a UNIQUE failure that slips past the check (another process wrote the name in between)", () => {
  it("is a 422 naming the API field, read from the database's real error", async () => {
    const now = new Date();
    await t.db.insert(tags).values({ name: "raced", nameKey: nameKey("raced"), createdAt: now, updatedAt: now });
    const failure = await t.db
      .insert(tags)
      .values({ name: "RACED", nameKey: nameKey("RACED"), createdAt: now, updatedAt: now })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeDefined();
    const answer = uniqueViolationError(failure);
    expect(answer?.status).toBe(422);
    expect(answer?.errors).toEqual({ name: ["name is already taken (by a record written at the same moment)"] });
  });
});
