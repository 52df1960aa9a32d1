import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, jobs, zones } from "../../db/schema/index.ts";
import { claimNextJob, claimNextZoneJob, enqueueDeviceJob, PRIORITY } from "../../platform/jobs/queue.ts";
import { hashSecret } from "./enrollment.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const device = (name: string, extra: Record<string, unknown> = {}) =>
  t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: { device_name: name, device_ip: "192.0.2.1", device_vendor: "Cisco", ...extra },
  });

describe("zones", () => {
  it("has the local zone, which every device is in unless it names another, and which cannot be deleted or made remote", async () => {
    const local = await t.call("/api/v1/zones/1", { token: admin });
    expect(local.body.data).toMatchObject({ id: 1, name: "local", mode: "local", has_enrollment_key: false });
    const d = await device("plain-01");
    expect(d.body.data.zone_id).toBe(1);
    expect((await t.call("/api/v1/zones/1", { method: "DELETE", token: admin })).status).toBe(409);
    const remote = await t.call("/api/v1/zones/1", { method: "PATCH", token: admin, body: { mode: "remote" } });
    expect(remote.status).toBe(422);
    expect(remote.body.errors.mode[0]).toMatch(/stays local/);
  });

  it("answers a remote zone's enrollment key once and keeps only its hash", async () => {
    const created = await t.call("/api/v1/zones", {
      method: "POST",
      token: admin,
      body: { name: "branch-ams", mode: "remote", description: "Amsterdam" },
    });
    expect(created.status).toBe(201);
    const key = created.body.data.enrollment_key as string;
    expect(key).toMatch(/^nkz_[A-Za-z0-9_-]{43}$/);
    expect(created.body.data).toMatchObject({ mode: "remote", has_enrollment_key: true, collectors_count: 0 });
    const id = created.body.data.id;
    const shown = await t.call(`/api/v1/zones/${id}`, { token: admin });
    expect(shown.body.data.enrollment_key).toBeUndefined();
    const listed = await t.call("/api/v1/zones?filter[mode]=remote", { token: admin });
    expect(JSON.stringify(listed.body)).not.toContain(key);
    const [row] = await t.db.select().from(zones).where(eq(zones.id, id));
    expect(row!.enrollmentKeyHash).toBe(await hashSecret(key));
    const log = await t.db.select().from(activityLog).where(eq(activityLog.subjectType, "zone"));
    expect(log.map((r) => r.action)).toContain("zone.create");
    expect(JSON.stringify(log)).not.toContain(key);

    const rotated = await t.call(`/api/v1/zones/${id}/enrollment-key`, { method: "POST", token: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.enrollment_key).not.toBe(key);
    const [after] = await t.db.select().from(zones).where(eq(zones.id, id));
    expect(after!.enrollmentKeyHash).toBe(await hashSecret(rotated.body.data.enrollment_key));
    expect((await t.call(`/api/v1/zones/${id}/enrollment-key`, { method: "DELETE", token: admin })).status).toBe(200);
    expect((await t.call(`/api/v1/zones/${id}`, { token: admin })).body.data.has_enrollment_key).toBe(false);
    expect((await t.call("/api/v1/zones/1/enrollment-key", { method: "POST", token: admin })).status).toBe(409);
  });

  it("puts a device in the zone it names, refuses an unknown zone, and refuses to delete a zone holding devices", async () => {
    const zone = (await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "dc-2" } })).body.data;
    expect((await device("bad-zone-01", { zone_id: 999 })).body.errors.zone_id[0]).toMatch(/not an existing zone/);
    const d = (await device("in-dc2-01", { zone_id: zone.id })).body.data;
    expect(d.zone_id).toBe(zone.id);
    expect((await t.call(`/api/v1/devices?filter[zone_id]=${zone.id}`, { token: admin })).body.data).toHaveLength(1);
    const refused = await t.call(`/api/v1/zones/${zone.id}`, { method: "DELETE", token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/holds 1 device/);
    await t.call(`/api/v1/devices/${d.id}`, { method: "PATCH", token: admin, body: { zone_id: 1 } });
    expect((await t.call(`/api/v1/zones/${zone.id}`, { method: "DELETE", token: admin })).status).toBe(200);
  });

  it("gives its tags to its devices: a role scoped to a zone's tag sees the zone's devices and only zones holding them", async () => {
    await t.role({ name: "ot-team", tags: ["ot"], permissions: ["devices.read", "system.read"] });
    const scoped = await t.token(["devices.read", "system.read"], { role: "ot-team" });
    const otTag = (await t.call("/api/v1/tags?filter[name]=ot", { token: admin })).body.data[0].id;
    const ot = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "ot-plant", tag_ids: [otTag] } })
    ).body.data;
    expect(ot.tag_ids).toEqual([otTag]);
    const inside = (await device("plc-gw-01", { zone_id: ot.id })).body.data;
    const outside = (await device("office-sw-01")).body.data;
    expect((await t.call(`/api/v1/devices/${inside.id}`, { token: scoped })).status).toBe(200);
    expect((await t.call(`/api/v1/devices/${outside.id}`, { token: scoped })).status).toBe(404);
    const seen = (await t.call("/api/v1/zones", { token: scoped })).body.data.map((z: { id: number }) => z.id);
    expect(seen).toEqual([ot.id]);
    expect((await t.call("/api/v1/zones/1", { token: scoped })).status).toBe(404);
    // Taking the tag off the zone takes its devices out of the scope.
    await t.call(`/api/v1/zones/${ot.id}`, { method: "PATCH", token: admin, body: { tag_ids: [] } });
    expect((await t.call(`/api/v1/devices/${inside.id}`, { token: scoped })).status).toBe(404);
  });
});

describe("claims by zone", () => {
  it("the built-in collector claims jobs of local zones only; a remote collector only its own zone's device jobs", async () => {
    const a = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "site-a", mode: "remote" } })
    ).body.data;
    const b = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "site-b", mode: "remote" } })
    ).body.data;
    const inA = (await device("rtr-a-01", { zone_id: a.id })).body.data;
    const inB = (await device("rtr-b-01", { zone_id: b.id })).body.data;
    const now = t.clock.now();
    for (const d of [inA, inB])
      await enqueueDeviceJob(
        t.db,
        { type: "download", deviceId: d.id, trigger: "api", priority: PRIORITY.downloadNow, maxAttempts: 1 },
        now,
      );
    // Only remote-zone jobs are queued at the top: the local claim skips them.
    const local = await claimNextJob(t.db, "local-1", now, 60_000);
    expect(local).toBeUndefined();
    const first = await claimNextZoneJob(t.db, a.id, "remote-a", now, 60_000);
    expect(first?.deviceId).toBe(inA.id);
    expect(await claimNextZoneJob(t.db, a.id, "remote-a", now, 60_000)).toBeUndefined();
    expect((await claimNextZoneJob(t.db, b.id, "remote-b", now, 60_000))?.deviceId).toBe(inB.id);
  });
});

describe("remote collectors in health, dashboard and /metrics", () => {
  const post = (path: string, body: unknown, credential?: string) =>
    t.request(path, {
      method: "POST",
      body,
      headers: credential ? { "collector-credential": credential } : {},
      offContract: "the collectors' API is not a user API (docs/zones.md)",
    });

  it("say when a remote zone has no live collector, and show each collector's heartbeat", async () => {
    const zone = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "branch-lon", mode: "remote" } })
    ).body.data;
    const orphaned = async () =>
      (await t.call("/api/v1/dashboard/collectors", { token: admin })).body.data.zones_without_collector.map(
        (z: { id: number }) => z.id,
      );
    expect(await orphaned()).toContain(zone.id);
    const health = async () =>
      (await t.call("/api/v1/system/health/run", { method: "POST", token: admin })).body.data.checks.find(
        (c: { name: string }) => c.name === "remote_zones",
      );
    expect(await health()).toMatchObject({ status: "warning" });
    expect((await health()).message).toContain("'branch-lon'");

    const { newKeyPair } = await import("../../platform/secrets/sealed-box.ts");
    const enrolled = await post("/collector-api/v1/enroll", {
      enrollment_key: zone.enrollment_key,
      name: "lon-1",
      public_key: newKeyPair().publicKey,
    });
    expect(enrolled.status).toBe(201);
    const { credential } = (await enrolled.json()).data;
    expect(
      (
        await post(
          "/collector-api/v1/heartbeat",
          { version: "9.9.9", sessions: 3, spool_bytes: 4096, spool_dropped: 0 },
          credential,
        )
      ).status,
    ).toBe(200);

    expect(await orphaned()).not.toContain(zone.id);
    const listed = (await t.call(`/api/v1/zones/${zone.id}/collectors`, { token: admin })).body.data;
    expect(listed).toMatchObject([{ name: "lon-1", version: "9.9.9", sessions: 3, spool_bytes: 4096, alive: true }]);
    const scrape = await (await t.request("/metrics", { headers: { authorization: `Bearer ${admin}` } })).text();
    expect(scrape).toMatch(/netkeep_remote_collector_up\{zone="branch-lon",collector="lon-1"\} 1/);
    expect(scrape).toMatch(/netkeep_remote_collector_spool_bytes\{zone="branch-lon",collector="lon-1"\} 4096/);

    // A wrong credential, and a revoked one, are refused at once.
    expect(
      (
        await post(
          "/collector-api/v1/heartbeat",
          { version: "x", sessions: 0, spool_bytes: 0, spool_dropped: 0 },
          "nkc_wrong",
        )
      ).status,
    ).toBe(401);
    await t.call(`/api/v1/zones/${zone.id}/collectors/${listed[0].id}/revoke`, { method: "POST", token: admin });
    expect(
      (
        await post(
          "/collector-api/v1/heartbeat",
          { version: "x", sessions: 0, spool_bytes: 0, spool_dropped: 0 },
          credential,
        )
      ).status,
    ).toBe(401);
    expect(await orphaned()).toContain(zone.id);
    // A revoked enrollment key enrolls no one.
    await t.call(`/api/v1/zones/${zone.id}/enrollment-key`, { method: "DELETE", token: admin });
    const late = await post("/collector-api/v1/enroll", {
      enrollment_key: zone.enrollment_key,
      name: "lon-2",
      public_key: newKeyPair().publicKey,
    });
    expect(late.status).toBe(401);
  });

  it("ends at the server a claimed job no site could run (no template), saying why", async () => {
    const zone = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "branch-par", mode: "remote" } })
    ).body.data;
    const { newKeyPair } = await import("../../platform/secrets/sealed-box.ts");
    const enrolled = await post("/collector-api/v1/enroll", {
      enrollment_key: zone.enrollment_key,
      name: "par-1",
      public_key: newKeyPair().publicKey,
    });
    const { credential } = (await enrolled.json()).data;
    const created = await device("par-bare-01", { zone_id: zone.id, device_template_id: null });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const bare = created.body.data;
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: bare.id, trigger: "api", priority: PRIORITY.api, maxAttempts: 1 },
      t.clock.now(),
    );
    const claim = await post("/collector-api/v1/jobs/claim", { wait_ms: 0, max: 10 }, credential);
    expect((await claim.json()).data).toEqual([]);
    const [ended] = await t.db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(ended).toMatchObject({ state: "finished", outcome: "error" });
    expect(ended!.message).toMatch(/no connection template/);
  });
});
