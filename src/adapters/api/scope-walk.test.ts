import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { ABILITIES } from "../../platform/auth/abilities.ts";
import { eq } from "drizzle-orm";
import { complianceResults, configs } from "../../db/schema/index.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { storeVersion, day } from "../../modules/configs/test-fixtures.ts";
import { API_VERSIONS, openApiDocument } from "./versions.ts";

/**
 * Walks every write route (POST, PUT, PATCH, DELETE) of both versions with a token holding every ability whose
 * role sees only the devices tagged zone-a, against objects that reach a device tagged zone-b: each must be
 * refused and leave the database as it was (issue 46). A route missing from PROBES fails the walk, so a new
 * write route is classified when it is added: probed, or named with the reason no shared object is involved.
 */

type Fixture = Awaited<ReturnType<typeof buildFixture>>;
type Probe = {
  params?: Record<string, number | string>;
  query?: string;
  body?: unknown;
  /** A CSV body (text/csv) instead of JSON. */
  csv?: string;
  /** The refusal expected: 403 (the object reaches other devices), 404 (the caller cannot see it), 422 (bulk items named as unknown). */
  expect: number;
  /** Tables the request may change: it acts only on the caller's own devices (a scoped purge, a scoped compliance run). */
  mayChange?: string[];
};
/** No object reaching another device is involved; the reason says why, and the route is not sent. */
type Exempt = { exempt: string };

const METHODS = ["post", "put", "patch", "delete"] as const;

function writeRoutes() {
  return API_VERSIONS.flatMap((version) =>
    Object.entries(openApiDocument(version, "http://netkeep.test").paths ?? {}).flatMap(([path, item]) =>
      METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((method) => ({
        version,
        path,
        method,
        key: `${method.toUpperCase()} ${path.replace(/^\/api\/v\d+/, "")}`,
      })),
    ),
  );
}

/** Tables every authenticated request may touch (the token's last use), and what a refusal itself records. */
const ALWAYS_CHANGING = new Set(["api_tokens"]);

function probes(f: Fixture): Record<string, Probe | Exempt> {
  const compliance = ["jobs", "activity_log"];
  return {
    // Devices: one outside the scope answers as one that does not exist.
    "POST /devices": {
      body: {
        device_name: "walk-new-device",
        device_ip: "192.0.2.90",
        device_vendor: "Cisco",
        device_tags: ["zone-a"],
        device_cred_id: f.credentialSet,
      },
      expect: 403,
    },
    "POST /devices/bulk": {
      body: {
        devices: [
          {
            device_name: "walk-new-device",
            device_ip: "192.0.2.90",
            device_vendor: "Cisco",
            device_tags: ["zone-a"],
            device_cred_id: f.credentialSet,
          },
        ],
      },
      expect: 403,
    },
    "PATCH /devices/bulk": { body: { devices: [{ id: f.outside, notes: "x" }] }, expect: 422 },
    "DELETE /devices/bulk": { body: { ids: [f.outside] }, expect: 422 },
    "POST /devices/bulk/enable": { body: { ids: [f.outside] }, expect: 422 },
    "POST /devices/bulk/disable": { body: { ids: [f.outside] }, expect: 422 },
    "PUT /devices/{id}": {
      params: { id: f.outside },
      body: { device_name: "walk-renamed", device_ip: "127.0.0.1", device_vendor: "Cisco", device_tags: ["zone-a"] },
      expect: 404,
    },
    "PATCH /devices/{id}": { params: { id: f.outside }, body: { device_ip: "127.0.0.1" }, expect: 404 },
    "DELETE /devices/{id}": { params: { id: f.outside }, expect: 404 },
    "POST /devices/{id}/enable": { params: { id: f.outside }, expect: 404 },
    "POST /devices/{id}/disable": { params: { id: f.outside }, expect: 404 },
    "POST /devices/{id}/host-key/reset": { params: { id: f.outside }, expect: 404 },
    "POST /devices/{id}/detect": { params: { id: f.outside }, expect: 404 },
    // Discovery sends shared credential sets to addresses and makes devices: a scoped role is refused outright.
    "POST /devices/discover": { body: { addresses: ["192.0.2.10"] }, expect: 403 },
    "POST /discovery/candidates/adopt": { expect: 403 },
    "POST /discovery/candidates/{id}/adopt": { params: { id: 1 }, expect: 403 },
    "POST /discovery/candidates/{id}/ignore": { params: { id: 1 }, expect: 403 },
    "POST /discovery/presets": { body: { name: "walk-preset", targets: ["192.0.2.0/28"] }, expect: 403 },
    "DELETE /discovery/presets/{id}": { params: { id: 1 }, expect: 403 },
    "POST /discovery/presets/{id}/run": { params: { id: 1 }, expect: 403 },
    // Each row is refused (a name a hidden device holds, a set the caller may not use): the answer is a report, nothing written.
    "POST /devices/import": {
      csv: `device_name,device_ip,device_vendor,device_tags,device_cred_id\r\nwalk-outside,127.0.0.1,Cisco,zone-a,\r\nwalk-new-device,127.0.0.1,Cisco,zone-a,${f.credentialSet}\r\n`,
      expect: 200,
    },

    // Configurations: the retention policy reaches every device; a purge only the caller's.
    "POST /configs/search": { exempt: "a read sent by POST" },
    "PUT /configs/retention-policy": { body: { keep_versions: 1 }, expect: 403 },
    "POST /configs/purge": { expect: 200, mayChange: ["activity_log"] },
    "DELETE /configs/{id}": { params: { id: f.outsideConfig }, expect: 404 },
    "POST /compare-exclusions": { body: { pattern: "." }, expect: 403 },
    "DELETE /compare-exclusions/bulk": { body: { ids: [f.exclusion] }, expect: 403 },
    "PUT /compare-exclusions/{id}": { params: { id: f.exclusion }, body: { pattern: "." }, expect: 403 },
    "PATCH /compare-exclusions/{id}": { params: { id: f.exclusion }, body: { pattern: "." }, expect: 403 },
    "DELETE /compare-exclusions/{id}": { params: { id: f.exclusion }, expect: 403 },

    // Records devices use.
    "POST /vendors": { exempt: "a new vendor reaches no device" },
    "DELETE /vendors/bulk": { body: { ids: [f.vendor] }, expect: 403 },
    "PUT /vendors/{id}": { params: { id: f.vendor }, body: { name: "Cisco Systems" }, expect: 403 },
    "PATCH /vendors/{id}": { params: { id: f.vendor }, body: { name: "Cisco Systems" }, expect: 403 },
    "DELETE /vendors/{id}": { params: { id: f.vendor }, expect: 403 },
    "POST /tags": { exempt: "a new tag reaches no device" },
    "POST /zones": { exempt: "a new zone holds no device" },
    "DELETE /zones/bulk": { body: { ids: [1] }, expect: 403 },
    "PUT /zones/{id}": { params: { id: 1 }, body: { name: "local" }, expect: 403 },
    "PATCH /zones/{id}": { params: { id: 1 }, body: { description: "x" }, expect: 403 },
    "DELETE /zones/{id}": { params: { id: 1 }, expect: 403 },
    "POST /zones/{id}/enrollment-key": { params: { id: 1 }, expect: 403 },
    "DELETE /zones/{id}/enrollment-key": { params: { id: 1 }, expect: 403 },
    "POST /zones/{id}/collectors/{collector_id}/revoke": { params: { id: 1, collector_id: 1 }, expect: 403 },
    "DELETE /zones/{id}/collectors/{collector_id}": { params: { id: 1, collector_id: 1 }, expect: 403 },
    "DELETE /tags/bulk": { body: { ids: [f.tag] }, expect: 403 },
    "PUT /tags/{id}": { params: { id: f.tag }, body: { name: "zone-b2" }, expect: 403 },
    "PATCH /tags/{id}": { params: { id: f.tag }, body: { name: "zone-b2" }, expect: 403 },
    "DELETE /tags/{id}": { params: { id: f.tag }, expect: 403 },
    "POST /device-credentials": { exempt: "a new credential set reaches no device" },
    "DELETE /device-credentials/bulk": { body: { ids: [f.credentialSet] }, expect: 403 },
    "PUT /device-credentials/{id}": {
      params: { id: f.credentialSet },
      body: { cred_name: "walk", cred_username: "x", cred_password: "y" },
      expect: 403,
    },
    "PATCH /device-credentials/{id}": { params: { id: f.credentialSet }, body: { cred_password: "y" }, expect: 403 },
    "DELETE /device-credentials/{id}": { params: { id: f.credentialSet }, expect: 403 },
    "POST /templates": { exempt: "a new template reaches no device" },
    "POST /templates/{id}/copy": { exempt: "copies into a new template no device uses" },
    "POST /templates/{id}/render": { exempt: "a read sent by POST: renders the text it is sent, stores nothing" },
    "DELETE /templates/bulk": { body: { ids: [f.template] }, expect: 403 },
    "PUT /templates/{id}": {
      params: { id: f.template },
      body: { name: "walk template", code: f.templateCode },
      expect: 403,
    },
    "PATCH /templates/{id}": { params: { id: f.template }, body: { description: "x" }, expect: 403 },
    "DELETE /templates/{id}": { params: { id: f.template }, expect: 403 },
    "POST /categories": { exempt: "a new category reaches no device" },
    "DELETE /categories/bulk": { body: { ids: [f.category] }, expect: 403 },
    "PUT /categories/{id}": { params: { id: f.category }, body: { name: "walk category" }, expect: 403 },
    "PATCH /categories/{id}": { params: { id: f.category }, body: { name: "walk category" }, expect: 403 },
    "DELETE /categories/{id}": { params: { id: f.category }, expect: 403 },
    "POST /commands": {
      body: { command: "copy running-config tftp://203.0.113.9/x", category_ids: [f.category] },
      expect: 403,
    },
    "DELETE /commands/bulk": { body: { ids: [f.command] }, expect: 403 },
    "PUT /commands/{id}": {
      params: { id: f.command },
      body: { command: "show users", category_ids: [f.category] },
      expect: 403,
    },
    "PATCH /commands/{id}": { params: { id: f.command }, body: { command: "show users" }, expect: 403 },
    "DELETE /commands/{id}": { params: { id: f.command }, expect: 403 },
    "POST /device-profiles": { body: { name: "walk profile", cred_id: f.credentialSet }, expect: 403 },
    "DELETE /device-profiles/bulk": { body: { ids: [f.profile] }, expect: 403 },
    "PUT /device-profiles/{id}": { params: { id: f.profile }, body: { name: "walk profile" }, expect: 403 },
    "PATCH /device-profiles/{id}": { params: { id: f.profile }, body: { description: "x" }, expect: 403 },
    "DELETE /device-profiles/{id}": { params: { id: f.profile }, expect: 403 },

    // Work done to devices.
    "POST /tasks": {
      body: {
        task_name: "walk task",
        task_cron: "0 3 * * *",
        task_type: "download_devices",
        devices: [f.inside, f.outside],
      },
      expect: 422,
    },
    "PUT /tasks/{id}": {
      params: { id: f.task },
      body: { task_name: "walk task", task_cron: "0 3 * * *", task_type: "download_devices", devices: [f.inside] },
      expect: 403,
    },
    "PATCH /tasks/{id}": { params: { id: f.task }, body: { task_cron: "* * * * *" }, expect: 403 },
    "DELETE /tasks/{id}": { params: { id: f.task }, expect: 403 },
    "POST /tasks/{id}/run": { params: { id: f.task }, expect: 403 },
    "POST /tasks/{id}/pause": { params: { id: f.task }, expect: 403 },
    "POST /tasks/{id}/resume": { params: { id: f.task }, expect: 403 },
    "POST /snippets": { exempt: "a new snippet reaches no device until a task or deploy of the caller's names it" },
    "DELETE /snippets/bulk": { body: { ids: [f.snippet] }, expect: 403 },
    "PUT /snippets/{id}": {
      params: { id: f.snippet },
      body: { name: "walk snippet", content: "username backdoor" },
      expect: 403,
    },
    "PATCH /snippets/{id}": { params: { id: f.snippet }, body: { content: "username backdoor" }, expect: 403 },
    "DELETE /snippets/{id}": { params: { id: f.snippet }, expect: 403 },
    "POST /snippets/{id}/send": { params: { id: f.snippet }, body: { device_id: f.outside }, expect: 404 },
    "POST /snippets/{id}/deploy": { params: { id: f.snippet }, body: { devices: [f.outside] }, expect: 422 },
    "POST /policy-compliance/{id}/snippet": { params: { id: f.outsideResult }, expect: 404 },
    "POST /policies": { exempt: "a new policy reaches no device until an assignment of the caller's names it" },
    "POST /policies/{id}/copy": { exempt: "copies into a new policy no assignment uses" },
    "DELETE /policies/bulk": { body: { ids: [f.policy] }, expect: 403 },
    "PUT /policies/{id}": {
      params: { id: f.policy },
      body: { name: "walk policy", definition: "#[must_match_single_string]\nhostname\n" },
      expect: 403,
    },
    "PATCH /policies/{id}": {
      params: { id: f.policy },
      body: { definition: "#[must_match_single_string]\nhostname\n" },
      expect: 403,
    },
    "DELETE /policies/{id}": { params: { id: f.policy }, expect: 403 },
    "POST /policies/{id}/run": { params: { id: f.policy }, expect: 202, mayChange: compliance },
    "POST /policy-assignments": { body: { policy_id: f.policy, scope: "all" }, expect: 403 },
    "DELETE /policy-assignments/bulk": { body: { ids: [f.assignment] }, expect: 403 },
    "PUT /policy-assignments/{id}": {
      params: { id: f.assignment },
      body: { policy_id: f.policy, scope: "devices", devices: [f.inside] },
      expect: 403,
    },
    "PATCH /policy-assignments/{id}": { params: { id: f.assignment }, body: { enabled: false }, expect: 403 },
    "DELETE /policy-assignments/{id}": { params: { id: f.assignment }, expect: 403 },
    "POST /policy-assignments/{id}/run": { params: { id: f.assignment }, expect: 202, mayChange: compliance },

    // People and the whole estate.
    "POST /users": {
      body: { username: "walk-admin", email: "walk@example.test", password: "walk-password-1234", role: "admin" },
      expect: 403,
    },
    "DELETE /users/bulk": { body: { ids: [f.adminUser] }, expect: 403 },
    "PUT /users/{id}": {
      params: { id: f.adminUser },
      body: { username: "walk-admin", email: "walk@example.test", role: "admin" },
      expect: 403,
    },
    "PATCH /users/{id}": { params: { id: f.adminUser }, body: { email: "walk@example.test" }, expect: 403 },
    "DELETE /users/{id}": { params: { id: f.adminUser }, expect: 403 },
    "POST /users/{id}/enable": { params: { id: f.adminUser }, expect: 403 },
    "POST /users/{id}/disable": { params: { id: f.adminUser }, expect: 403 },
    "POST /users/{id}/password": { params: { id: f.adminUser }, body: { password: "walk-password-1234" }, expect: 403 },
    "PUT /users/{id}/mail-subscriptions": { params: { id: f.adminUser }, body: { task_failures: false }, expect: 403 },
    "POST /users/{id}/second-factor/reset": { params: { id: f.adminUser }, expect: 403 },
    "POST /roles": { body: { name: "walk role", permissions: ["devices.read"] }, expect: 403 },
    "DELETE /roles/bulk": { body: { ids: [f.wideRole] }, expect: 403 },
    "PUT /roles/{id}": {
      params: { id: f.wideRole },
      body: { name: "walk role", permissions: ["devices.read"] },
      expect: 403,
    },
    "PATCH /roles/{id}": { params: { id: f.wideRole }, body: { description: "x" }, expect: 403 },
    "DELETE /roles/{id}": { params: { id: f.wideRole }, expect: 403 },
    "PATCH /settings": { body: { default_credential_id: f.credentialSet }, expect: 403 },
    "POST /settings/smtp/test": {
      exempt: "sends one message through the settings in force; changes nothing and reaches no device",
    },
    "POST /system/health/run": { exempt: "runs netkeep's own health checks; reaches no device" },
    "POST /system/backups": { expect: 403 },
    "DELETE /system/backups/{id}": { params: { id: "netkeep-20260601T010000000Z.db.gz" }, expect: 403 },
    "POST /webhooks": { body: { url: "http://127.0.0.1:9/walk" }, expect: 403 },
    "PATCH /webhooks/{id}": { params: { id: f.webhook }, body: { tag_ids: [] }, expect: 403 },
    "DELETE /webhooks/{id}": { params: { id: f.webhook }, expect: 403 },
    "POST /webhooks/{id}/rotate-secret": { params: { id: f.webhook }, expect: 403 },
    "POST /webhooks/{id}/ping": { params: { id: f.webhook }, expect: 403 },
    "POST /webhooks/{id}/deliveries/{delivery_id}/redeliver": {
      params: { id: f.webhook, delivery_id: 1 },
      expect: 403,
    },
  };
}

let t: TestContext;
let admin: string;

async function made(path: string, body: Record<string, unknown>): Promise<number> {
  const res = await t.call(`/api/v1${path}`, { method: "POST", token: admin, body });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** A world in which every shared object reaches the zone-b device `outside` (and some also the zone-a `inside`). */
async function buildFixture() {
  const vendor = (await t.call("/api/v1/vendors?filter[name]=Cisco", { token: admin })).body.data[0].id as number;
  const builtin =
    (await t.call("/api/v1/templates?filter[name]=Cisco IOS", { token: admin })).body.data[0] ??
    (await t.call("/api/v1/templates", { token: admin })).body.data[0];
  const copy = await t.call(`/api/v1/templates/${builtin.id}/copy`, { method: "POST", token: admin, body: {} });
  const template = copy.body.data.id as number;
  const credentialSet = await made("/device-credentials", {
    cred_name: "walk shared",
    cred_username: "netops",
    cred_password: "walk-shared-pass",
  });
  const category = await made("/categories", { name: "walk shared" });
  const command = await made("/commands", { command: "show walk", category_ids: [category] });
  const profile = await made("/device-profiles", { name: "walk shared profile" });
  const inside = await made("/devices", {
    device_name: "walk-inside",
    device_ip: "192.0.2.1",
    device_vendor: "Cisco",
    device_tags: ["zone-a"],
  });
  const outside = await made("/devices", {
    device_name: "walk-outside",
    device_ip: "192.0.2.2",
    device_vendor: "Cisco",
    device_tags: ["zone-b"],
    device_profile_id: profile,
    device_cred_id: credentialSet,
    device_template_id: template,
    device_category_id: category,
  });
  const tag = (await t.call("/api/v1/tags?filter[name]=zone-b", { token: admin })).body.data[0].id as number;
  const snippet = await made("/snippets", { name: "walk snippet", content: "ntp server 10.0.0.1" });
  await made("/tasks", {
    task_name: "walk snippet task",
    task_cron: "0 3 * * *",
    task_type: "snippet",
    devices: [outside],
    snippet_id: snippet,
  });
  const task = await made("/tasks", {
    task_name: "walk backup",
    task_cron: "0 3 * * *",
    task_type: "download_devices",
    devices: [inside, outside],
  });
  const policy = await made("/policies", {
    name: "walk policy",
    definition: "#[must_match_single_string]\nntp server\n",
  });
  const assignment = await made("/policy-assignments", {
    policy_id: policy,
    scope: "devices",
    devices: [inside, outside],
  });
  const [result] = await t.db
    .insert(complianceResults)
    .values({
      assignmentId: assignment,
      policyId: policy,
      deviceId: outside,
      command: "show running-config",
      policyHash: "x",
      status: "not_compliant",
      score: 0,
      passedRules: 0,
      totalRules: 1,
      rules: [],
      evaluatedAt: day(2),
    })
    .returning({ id: complianceResults.id });
  const exclusion = await made("/compare-exclusions", { pattern: "^! Last configuration change" });
  // Two versions of the outside device, and a retention policy that keeps one: a purge by a scoped user must not touch them.
  await storeVersion(t, { deviceId: outside, text: "hostname outside\n", at: day(1) });
  const { configId: outsideConfig } = await storeVersion(t, {
    deviceId: outside,
    text: "hostname outside2\n",
    at: day(2),
  });
  expect(
    (await t.call("/api/v1/configs/retention-policy", { method: "PUT", token: admin, body: { keep_versions: 1 } }))
      .status,
  ).toBe(200);
  const webhook = await made("/webhooks", { url: "http://127.0.0.1:9/walk", tag_ids: [tag] });
  const wideRole = await made("/roles", { name: "walk wide", permissions: ["devices.read"] });
  const adminUser = await t.user();
  return {
    vendor,
    template,
    templateCode: copy.body.data.code as string,
    credentialSet,
    category,
    command,
    profile,
    inside,
    outside,
    tag,
    snippet,
    task,
    policy,
    assignment,
    outsideResult: result!.id,
    exclusion,
    outsideConfig,
    webhook,
    wideRole,
    adminUser,
  };
}

/** Every table's rows, hashed: what "nothing changed" is checked against. */
async function snapshot(): Promise<Map<string, string>> {
  const tables = (
    await t.client.execute(
      "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '__drizzle%'",
    )
  ).rows.map((r) => String(r.name));
  const out = new Map<string, string>();
  for (const name of tables) {
    const rows = (await t.client.execute(`select * from "${name}"`)).rows;
    out.set(
      name,
      createHash("sha256")
        .update(
          JSON.stringify(rows, (_k, v) =>
            typeof v === "bigint" ? String(v) : v instanceof ArrayBuffer ? Buffer.from(v).toString("hex") : v,
          ),
        )
        .digest("hex"),
    );
  }
  return out;
}

let f: Fixture;
let scoped: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  await t.role({ name: "zone-a walker", permissions: ABILITIES, tags: ["zone-a"] });
  scoped = await t.token(ABILITIES, { role: "zone-a walker" });
  f = await buildFixture();
});
afterAll(() => t.close());

describe("the scope walk", () => {
  it("classifies every write route, and nothing else", () => {
    const table = probes(f);
    const keys = new Set(writeRoutes().map((r) => r.key));
    expect(
      [...keys].filter((k) => !(k in table)),
      "write routes the walk does not classify",
    ).toEqual([]);
    expect(
      Object.keys(table).filter((k) => !keys.has(k)),
      "entries for routes that no longer exist",
    ).toEqual([]);
  });

  it("refuses every write through an object that reaches a device outside the scope, and changes nothing", async () => {
    const table = probes(f);
    const failures: string[] = [];
    for (const route of writeRoutes()) {
      const probe = table[route.key];
      if (!probe || "exempt" in probe) continue;
      const path = route.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
        String(probe.params?.[name] ?? `{${name}}`),
      );
      const before = await snapshot();
      const res = await t.call(`${path}${probe.query ?? ""}`, {
        method: route.method.toUpperCase(),
        token: scoped,
        body: probe.body,
        ...(probe.csv ? { rawBody: probe.csv, headers: { "content-type": "text/csv" } } : {}),
      });
      const after = await snapshot();
      const changed = [...after]
        .filter(
          ([name, hash]) => before.get(name) !== hash && !ALWAYS_CHANGING.has(name) && !probe.mayChange?.includes(name),
        )
        .map(([name]) => name);
      if (res.status !== probe.expect)
        failures.push(`${route.method.toUpperCase()} ${path}: ${res.status} ${res.body?.message ?? ""}`);
      if (changed.length) failures.push(`${route.method.toUpperCase()} ${path}: changed ${changed.join(", ")}`);
    }
    expect(failures).toEqual([]);
    // The versions a scoped purge must not touch are still there.
    expect(await t.db.$count(configs, eq(configs.deviceId, f.outside))).toBe(2);
  });
});
