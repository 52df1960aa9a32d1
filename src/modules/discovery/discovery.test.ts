import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { devices, discoveryCandidates, jobs, scanPresets, tasks } from "../../db/schema/index.ts";

/**
 * Discovery's API before any collector runs: what a scan request may name (each bad body a 422 that says what to
 * fix, nothing queued), what it queues, and that a role scoped to some devices can neither read nor start nor
 * adopt anything of discovery's (its scans use shared credential sets; its devices would fall outside the scope).
 * The scans themselves run against fake devices in test/collector/discovery.test.ts.
 */

let t: TestContext;
let admin: string;
let scoped: string;
let noRead: string;
let candidateId: number;
let presetId: number;

const discoverJobs = async () => t.db.select().from(jobs).where(eq(jobs.type, "discover"));

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  await t.role({ name: "branch-admins", tags: ["branch"] });
  scoped = await t.token(undefined, { role: "branch-admins" });
  noRead = await t.token(["configs.read"]);
  const now = t.clock.now();
  const [candidate] = await t.db
    .insert(discoveryCandidates)
    .values({ address: "192.0.2.50", port: 22, protocol: "ssh", foundAt: now, createdAt: now, updatedAt: now })
    .returning();
  candidateId = candidate!.id;
  const preset = await t.call("/api/v1/discovery/presets", {
    method: "POST",
    token: admin,
    body: { name: "lab", targets: ["192.0.2.0/28"] },
  });
  expect(preset.status, JSON.stringify(preset.body)).toBe(201);
  presetId = preset.body.data.id;
});
afterAll(() => t?.close());

describe("POST /devices/discover: what it takes", () => {
  const refused: [string, unknown, Record<string, string[]>][] = [
    [
      "no targets",
      { addresses: [] },
      { addresses: ["addresses needs at least one address, host name, range or subnet"] },
    ],
    ["targets not a list", { addresses: "192.0.2.1" }, { addresses: ["addresses must be of type array"] }],
    ["port 0", { addresses: ["192.0.2.1"], ports: [0] }, { "ports.0": ["ports.0 must be a port number"] }],
    ["port 70000", { addresses: ["192.0.2.1"], ports: [70000] }, { "ports.0": ["ports.0 must be a port number"] }],
    ["no ports", { addresses: ["192.0.2.1"], ports: [] }, { ports: ["ports needs at least one port"] }],
    [
      "more than 4096 addresses",
      { addresses: ["10.0.0.0/20", "10.0.16.0/20"] },
      { addresses: ["the targets name more than 4096 addresses; scan them in parts"] },
    ],
    [
      "an IPv6 subnet",
      { addresses: ["2001:db8::/64"] },
      {
        "addresses.0": ["2001:db8::/64 is not an address, host name, range (a.b.c.d-e.f.g.h) or subnet (a.b.c.d/nn)"],
      },
    ],
    [
      "0.0.0.0 (a connect there reaches the scanner itself)",
      { addresses: ["0.0.0.0"] },
      {
        "addresses.0": [
          "0.0.0.0 is not a device address: 0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned",
        ],
      },
    ],
    [
      "a credential set that does not exist",
      { addresses: ["192.0.2.1"], credential_ids: [999] },
      { credential_ids: ["no credential set has id 999"] },
    ],
  ];
  for (const [what, body, errors] of refused)
    it(`refuses ${what} with a 422 naming the field, and queues nothing`, async () => {
      const res = await t.call("/api/v1/devices/discover", { method: "POST", token: admin, body });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual(errors);
      expect(await discoverJobs()).toEqual([]);
    });

  it("queues a /21 as its 2046 hosts, an IPv6 address as it is, and the ports once each", async () => {
    const res = await t.call("/api/v1/devices/discover", {
      method: "POST",
      token: admin,
      body: { addresses: ["10.1.0.0/21", "2001:db8::7"], ports: [22, 2222, 22] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const [job] = await t.db.select().from(jobs).where(eq(jobs.id, res.body.data.id));
    const params = job!.params as { addresses: string[]; ports: number[]; adopt: boolean };
    expect(params.addresses).toHaveLength(2047);
    expect([params.addresses[0], params.addresses[2045], params.addresses[2046]]).toEqual([
      "10.1.0.1",
      "10.1.7.254",
      "2001:db8::7",
    ]);
    expect(params).toMatchObject({ ports: [22, 2222], adopt: false });
    await t.db.delete(jobs).where(eq(jobs.id, job!.id));
  });
});

describe("a role scoped to some devices", () => {
  it("cannot list candidates or presets (403), nor can a role without devices.read", async () => {
    for (const path of ["/api/v1/discovery/candidates", "/api/v1/discovery/presets"]) {
      const res = await t.call(path, { token: scoped });
      expect(res.status, path).toBe(403);
      expect(res.body.message).toBe(
        "Discovery needs a role that sees every device: its scans use shared credential sets",
      );
      expect((await t.call(path, { token: noRead })).status, path).toBe(403);
    }
    // The same lists answer a role that sees every device.
    expect((await t.call("/api/v1/discovery/candidates", { token: admin })).body.meta.total).toBe(1);
  });

  it("cannot scan, run a preset, schedule one, adopt or ignore: nothing is queued or made", async () => {
    const tries: [string, string, unknown?][] = [
      ["POST", "/api/v1/devices/discover", { addresses: ["192.0.2.1"] }],
      ["POST", `/api/v1/discovery/presets/${presetId}/run`],
      ["POST", `/api/v1/discovery/candidates/${candidateId}/adopt`],
      ["POST", "/api/v1/discovery/candidates/adopt"],
      ["POST", `/api/v1/discovery/candidates/${candidateId}/ignore`],
      ["POST", "/api/v1/discovery/presets", { name: "mine", targets: ["192.0.2.0/28"] }],
      ["DELETE", `/api/v1/discovery/presets/${presetId}`],
    ];
    for (const [method, path, body] of tries) {
      const res = await t.call(path, { method, token: scoped, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token: scoped,
      body: { task_name: "my scan", task_type: "discovery_scan", task_cron: "0 4 * * *", scan_preset_id: presetId },
    });
    expect(task.status).toBe(403);
    expect(await discoverJobs()).toEqual([]);
    expect(await t.db.select().from(devices)).toEqual([]);
    expect(await t.db.select().from(tasks).where(eq(tasks.name, "my scan"))).toEqual([]);
    expect((await t.db.select().from(scanPresets)).map((p) => p.name)).toEqual(["lab"]);
    const [candidate] = await t.db.select().from(discoveryCandidates);
    expect(candidate).toMatchObject({ state: "pending", deviceId: null });
  });
});
