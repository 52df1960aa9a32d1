import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { serve, type ServerType } from "@hono/node-server";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectorUploads, configs, remoteCollectors } from "../../src/db/schema/index.ts";
import { enqueueDeviceJob, getJob, PRIORITY, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { createTestContext, type TestContext } from "../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, latestConfigs, iosScript } from "../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../test/helpers/fake-device.ts";
import { startConfigDevice } from "../../test/helpers/config-device.ts";
import { freePort, start, stopGroup, type Spawned } from "../../test/helpers/process.ts";
import { until } from "../../test/helpers/until.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../worker.ts";
import { COLLECTOR_CREDENTIAL_HEADER } from "../../src/runtime/collector-api/wire.ts";

/**
 * The API on a loopback port, the built-in collector beside it, and remote collectors as `svc collector:remote`
 * processes, each zone with its own fake devices. What crosses the wire between them is kept for inspection.
 */
const DEVICE_PASSWORD = "dev1ce-Pa55word";
const SECRET = "S3cretCommunity42";
const LEASE_SECONDS = 3;

let t: TestContext;
let admin: string;
let port: number;
let server: ServerType | undefined;
let worker: ReturnType<typeof startWorker>;
const dirs: string[] = [];
const fakes: FakeDevice[] = [];
const procs: Spawned[] = [];
/** Each request to the collectors' API: the credential that sent it, its path, its body and its answer. */
const wire: { credential: string; path: string; request: string; answer: string }[] = [];

function listen(): void {
  server = serve({
    hostname: "127.0.0.1",
    port,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      if (!path.startsWith("/collector-api/v1/")) return t.app.fetch(req);
      const raw = Buffer.from(await req.clone().arrayBuffer());
      const request = req.headers.get("content-encoding") === "gzip" ? gunzipSync(raw).toString() : raw.toString();
      const res = await t.app.fetch(req);
      wire.push({
        credential: req.headers.get(COLLECTOR_CREDENTIAL_HEADER) ?? "",
        path,
        request,
        answer: await res.clone().text(),
      });
      return res;
    },
  });
}

async function stopListening(): Promise<void> {
  const s = server!;
  server = undefined;
  (s as unknown as { closeAllConnections(): void }).closeAllConnections();
  await new Promise((r) => s.close(r));
}

const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

function remoteCollector(args: string[], stateDir = tempDir("netkeep-site-")): Spawned & { stateDir: string } {
  const spawned = start(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli/main.ts",
      "collector:remote",
      "--state-dir",
      stateDir,
      "--heartbeat-seconds",
      "1",
      "--claim-wait-seconds",
      "2",
      ...args,
    ],
    { STORAGE_DIR: stateDir, LOG_LEVEL: "info", APP_KEY: "", NODE_ENV: "production" },
  );
  procs.push(spawned);
  return { ...spawned, stateDir };
}

// A remote collector is a process of its own talking HTTP to the API: its steps take seconds on a loaded machine.
const SLOW = { tries: 600, everyMs: 100 };

const finished = (id: number) =>
  until(
    `job ${id} to finish`,
    () => getJob(t.db, id),
    (j) => j?.state === "finished",
    SLOW,
  ) as Promise<Job>;

async function zone(name: string) {
  const res = await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name, mode: "remote" } });
  return res.body.data as { id: number; enrollment_key: string };
}

async function device(name: string, zoneId: number, latencyMs = 0) {
  const { prompt, script } = iosScript(name, [
    "hostname " + name,
    `snmp-server community ${SECRET} RO`,
    "interface Loopback0",
    " ip address 10.0.0.1 255.255.255.255",
  ]);
  const fake = await startFakeDevice({
    script,
    initPrompt: prompt,
    auth: { username: "backup", password: DEVICE_PASSWORD },
    latencyMs,
  });
  fakes.push(fake);
  const id = await addLoopbackDevice(t, admin, {
    name,
    port: fake.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: "backup",
    password: DEVICE_PASSWORD,
    zone_id: zoneId,
  });
  return { id, fake };
}

const download = async (deviceId: number) =>
  (
    await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: PRIORITY.api, maxAttempts: 1 },
      new Date(),
    )
  ).job;

let zoneA: { id: number; enrollment_key: string };
let zoneB: { id: number; enrollment_key: string };
let siteA: ReturnType<typeof remoteCollector>;
let siteB: ReturnType<typeof remoteCollector>;

beforeAll(async () => {
  t = await createTestContext({ env: { COLLECTOR_LEASE_SECONDS: String(LEASE_SECONDS) } });
  admin = await t.token();
  port = await freePort();
  listen();
  worker = startWorker(
    { db: t.db, secrets: t.secrets, clock: { now: () => new Date() }, logger: silentLogger, owner: "builtin" },
    { ...DEFAULT_WORKER_OPTIONS, pollIntervalMs: 100, leaseMs: LEASE_SECONDS * 1000 },
  );
  zoneA = await zone("site-a");
  zoneB = await zone("site-b");
}, 60_000);

afterAll(async () => {
  for (const p of procs) stopGroup(p, "SIGKILL");
  await worker?.stop(Date.now());
  if (server) await stopListening();
  for (const f of fakes) await f.close();
  await t?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("remote collectors", () => {
  it("back up each device through its own zone's collector, masked at the site; zone A sees nothing of zone B", async () => {
    const local = await device("local-rtr-1", 1);
    const a = [await device("site-a-rtr-1", zoneA.id), await device("site-a-rtr-2", zoneA.id)];
    const b = [await device("site-b-rtr-1", zoneB.id)];
    siteA = remoteCollector([
      "--server",
      `http://127.0.0.1:${port}`,
      "--allow-http",
      "--enroll",
      zoneA.enrollment_key,
      "--name",
      "site-a-1",
    ]);
    siteB = remoteCollector([
      "--server",
      `http://127.0.0.1:${port}`,
      "--allow-http",
      "--enroll",
      zoneB.enrollment_key,
      "--name",
      "site-b-1",
    ]);
    const all = [local, ...a, ...b];
    const queued = await Promise.all(all.map((d) => download(d.id)));
    const ends = await Promise.all(queued.map((j) => finished(j.id)));
    expect(
      ends.map((j) => j.outcome),
      siteA.output() + siteB.output(),
    ).toEqual(all.map(() => "success"));
    expect(siteA.output()).toMatch(/plain HTTP/);

    const collectors = await t.db.select().from(remoteCollectors);
    const idOf = (name: string) => collectors.find((c) => c.name === name)!.id;
    const uploads = await t.db.select().from(collectorUploads);
    const uploaderOf = (jobId: number) => uploads.find((u) => u.jobId === jobId)?.collectorId;
    expect(uploaderOf(queued[0]!.id)).toBeUndefined(); // the local device: the built-in collector, no upload
    expect(uploaderOf(queued[1]!.id)).toBe(idOf("site-a-1"));
    expect(uploaderOf(queued[2]!.id)).toBe(idOf("site-a-1"));
    expect(uploaderOf(queued[3]!.id)).toBe(idOf("site-b-1"));
    for (const d of all) expect(d.fake.sessions).toBe(1);

    // Stored masked, as a local backup is.
    const stored = await latestConfigs(t, a[0]!.id);
    expect(stored.get("show running-config")).toContain("snmp-server community");
    expect(stored.get("show running-config")).not.toContain(SECRET);

    // What crossed the wire: no secret of the configuration, no device password, and nothing of the other zone.
    expect(wire.some((w) => w.path.endsWith("/results"))).toBe(true);
    for (const w of wire) {
      expect(w.request).not.toContain(SECRET);
      expect(w.request + w.answer).not.toContain(DEVICE_PASSWORD);
    }
    const claimsOf = (credential: string) =>
      wire
        .filter((w) => w.credential === credential && w.path.endsWith("/jobs/claim"))
        .flatMap((w) => (JSON.parse(w.answer).data ?? []) as { id: number; device: { id: number; zoneId: number } }[]);
    const credentials = [...new Set(wire.map((w) => w.credential).filter(Boolean))];
    expect(credentials).toHaveLength(2);
    for (const credential of credentials) {
      const seen = claimsOf(credential);
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen.map((j) => j.device.zoneId)).size).toBe(1);
    }
    const zoneOfCredential = new Map(credentials.map((c) => [c, claimsOf(c)[0]!.device.zoneId]));
    expect([...zoneOfCredential.values()].sort()).toEqual([zoneA.id, zoneB.id].sort());
  }, 120_000);

  it("detects a remote zone's device and pushes a snippet to one through its collector, masked at the site", async () => {
    const detected = await device("site-a-detect-1", zoneA.id);
    const bDetected = await device("site-b-detect-1", zoneB.id);
    const PUSH_SECRET = "PushC0mmunity77";
    const fake = await startConfigDevice({
      flavor: "ios",
      hostname: "site-a-edge-1",
      running: ["hostname site-a-edge-1", "interface Vlan20", " ip address 192.0.2.20 255.255.255.0"],
      auth: { username: "backup", password: DEVICE_PASSWORD },
    });
    fakes.push(fake);
    const pushTo = await addLoopbackDevice(t, admin, {
      name: "site-a-edge-1",
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "backup",
      password: DEVICE_PASSWORD,
      zone_id: zoneA.id,
    });
    const wireFrom = wire.length;

    const detect = (id: number) =>
      t.call(`/api/v1/devices/${id}/detect?wait=60`, { method: "POST", token: admin, body: {} });
    const [a, b] = await Promise.all([detect(detected.id), detect(bDetected.id)]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.data, siteA.output()).toMatchObject({ state: "finished", outcome: "success" });
    // The fixture's show version: "Cisco IOS XE Software, Version 17.09.04a".
    expect(a.body.data.result.proposal).toMatchObject({ template: "cisco-ios", os_version: "17.09.04a" });
    expect(b.body.data).toMatchObject({ state: "finished", outcome: "success" });
    expect(detected.fake.sessions).toBe(1);

    const snippet = await t.call("/api/v1/snippets", {
      method: "POST",
      token: admin,
      body: { name: "site snmp", content: `snmp-server community ${PUSH_SECRET} RO\nntp server 192.0.2.123` },
    });
    expect(snippet.status, JSON.stringify(snippet.body)).toBe(201);
    const sent = await t.call(`/api/v1/snippets/${snippet.body.data.id}/send?wait=60`, {
      method: "POST",
      token: admin,
      body: { device_id: pushTo },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data, siteA.output()).toMatchObject({
      type: "snippet_push",
      state: "finished",
      outcome: "success",
    });
    // The device changed, and saved it.
    expect(fake.state.running).toContain("ntp server 192.0.2.123");
    expect(fake.state.running).toContain(`snmp-server community ${PUSH_SECRET} RO`);
    expect(fake.state.startup).toEqual(fake.state.running);
    const pushed = (
      await t.call(`/api/v1/snippet-deployments/${sent.body.data.deployment_id}/devices`, { token: admin })
    ).body.data[0];
    expect(pushed.status).toBe("success");
    expect(pushed.transcript).toContain("> ntp server 192.0.2.123");
    expect(pushed.result.diff).toContain("+ntp server 192.0.2.123");
    // Stored masked: the push's output (transcript, result, diff) and the configuration after it. (The lines
    // are the snippet's own, as the user wrote them.)
    expect(pushed.transcript).toContain("> snmp-server community <secret hidden> RO");
    for (const output of [pushed.transcript, JSON.stringify(pushed.result), pushed.message]) {
      expect(output).not.toContain(PUSH_SECRET);
      expect(output).not.toContain(DEVICE_PASSWORD);
    }
    const after = await latestConfigs(t, pushTo);
    expect(after.get("show running-config")).toContain("ntp server 192.0.2.123");
    expect(after.get("show running-config")).not.toContain(PUSH_SECRET);
    for (const jobId of [pushed.result.before_job_id, pushed.result.after_job_id])
      expect((await getJob(t.db, jobId))!).toMatchObject({ type: "download", trigger: "snippet", outcome: "success" });

    // Both results came from zone A's collector; what went up the wire holds neither secret.
    const [siteACollector] = await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.name, "site-a-1"));
    for (const jobId of [a.body.data.id, sent.body.data.id]) {
      const [upload] = await t.db.select().from(collectorUploads).where(eq(collectorUploads.jobId, jobId));
      expect(upload!.collectorId).toBe(siteACollector!.id);
    }
    const since = wire.slice(wireFrom);
    expect(since.filter((w) => w.path.endsWith("/results")).length).toBeGreaterThanOrEqual(2);
    for (const w of since) {
      expect(w.request).not.toContain(PUSH_SECRET);
      expect(w.request).not.toContain(SECRET);
      expect(w.request + w.answer).not.toContain(DEVICE_PASSWORD);
    }
    // Zone A's collector was handed none of zone B's jobs, and the other way round.
    const claimed = since
      .filter((w) => w.path.endsWith("/jobs/claim"))
      .flatMap((w) =>
        ((JSON.parse(w.answer).data ?? []) as { type: string; device: { zoneId: number } }[]).map((j) => ({
          credential: w.credential,
          ...j,
        })),
      );
    expect(new Set(claimed.map((j) => j.type))).toEqual(new Set(["detect", "snippet_push"]));
    const zonesOf = (credential: string) =>
      new Set(claimed.filter((j) => j.credential === credential).map((j) => j.device.zoneId));
    for (const credential of new Set(claimed.map((j) => j.credential))) expect(zonesOf(credential).size).toBe(1);
    expect(new Set(claimed.map((j) => j.device.zoneId))).toEqual(new Set([zoneA.id, zoneB.id]));
  }, 120_000);

  it("says when a version's secrets changed, from a digest made at the site: the values never cross the wire", async () => {
    const name = "site-a-rotate-1";
    const communities = ["F1rstCommunity11", "S3condCommunity22"];
    let community = communities[0]!;
    const config = () => [`hostname ${name}`, `snmp-server community ${community} RO`, "interface Loopback0"];
    const fake = await startFakeDevice({
      script: (line) => iosScript(name, config()).script(line),
      initPrompt: iosScript(name, []).prompt,
      auth: { username: "backup", password: DEVICE_PASSWORD },
    });
    fakes.push(fake);
    const id = await addLoopbackDevice(t, admin, {
      name,
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "backup",
      password: DEVICE_PASSWORD,
      zone_id: zoneA.id,
    });
    const wireFrom = wire.length;
    const versions = async () =>
      (await t.db.select().from(configs).where(eq(configs.deviceId, id)))
        .filter((v) => v.command === "show running-config")
        .sort((x, y) => x.version - y.version);

    expect((await finished((await download(id)).id)).outcome).toBe("success");
    // Only the masked value moved: the same text reaches the server, and its digest says it is a new version.
    community = communities[1]!;
    expect((await finished((await download(id)).id)).outcome).toBe("success");
    // The same again: no new version.
    expect((await finished((await download(id)).id)).outcome).toBe("unchanged");

    const stored = await versions();
    expect(stored.map((v) => [v.version, v.secretsChanged, v.seenCount])).toEqual([
      [1, false, 1],
      [2, true, 2],
    ]);
    // Made under zone A's key, and labelled so: never compared with a digest made under another key.
    for (const v of stored) expect(v.secretsDigest).toMatch(new RegExp(`^zone-${zoneA.id}:[0-9a-f]{64}$`));
    expect(stored[0]!.secretsDigest).not.toBe(stored[1]!.secretsDigest);
    for (const w of wire.slice(wireFrom)) for (const c of communities) expect(w.request).not.toContain(c);
  }, 120_000);

  it("keeps working while the API is away: results wait in the spool and arrive once, in order", async () => {
    const slow = await device("site-a-slow-1", zoneA.id, 400);
    const job = await download(slow.id);
    await until(
      "the slow job to start",
      () => getJob(t.db, job.id),
      (j) => j?.state === "running",
      SLOW,
    );
    await stopListening();
    // The session ends while the API is away: its result goes to the spool on disk.
    await until(
      "the result to be spooled",
      async () => readdirSync(join(siteA.stateDir, "spool")).filter((f) => f.endsWith(".json.gz")).length,
      (n) => n > 0,
      SLOW,
    );
    expect(siteA.child.exitCode).toBeNull();
    listen();
    const end = await finished(job.id);
    expect(end.outcome).toBe("success");
    const versions = await t.db.select().from(configs).where(eq(configs.deviceId, slow.id));
    expect(versions.map((v) => v.seenCount)).toEqual(versions.map(() => 1));
    expect(await t.db.select().from(collectorUploads).where(eq(collectorUploads.jobId, job.id))).toHaveLength(1);
    await until(
      "the spool to empty",
      async () => readdirSync(join(siteA.stateDir, "spool")).filter((f) => f.endsWith(".json.gz")).length,
      (n) => n === 0,
      SLOW,
    );
  }, 120_000);

  it("stores a result spooled past its lease once, even when the job went back to the queue meanwhile", async () => {
    const slow = await device("site-a-slow-3", zoneA.id, 400);
    const job = await download(slow.id);
    await until(
      "the slow job to start",
      () => getJob(t.db, job.id),
      (j) => j?.state === "running",
      SLOW,
    );
    await stopListening();
    await until(
      "the result to be spooled",
      async () => readdirSync(join(siteA.stateDir, "spool")).filter((f) => f.endsWith(".json.gz")).length,
      (n) => n > 0,
      SLOW,
    );
    // The lease runs out while the API is away: the built-in collector's pass puts the job back in the queue.
    await until(
      "the lease to run out",
      () => getJob(t.db, job.id),
      (j) => j?.state === "queued",
      SLOW,
    );
    listen();
    const end = await finished(job.id);
    expect(end.outcome).toBe("success");
    const uploads = await t.db.select().from(collectorUploads).where(eq(collectorUploads.jobId, job.id));
    expect(uploads.filter((u) => (u.answer as { recorded: boolean }).recorded)).toHaveLength(1);
    // The spooled result (the first delivered) is the one stored: the job waited for it, not for a second session.
    expect((uploads.toSorted((x, y) => x.id - y.id)[0]!.answer as { recorded: boolean }).recorded).toBe(true);
    const versions = await t.db.select().from(configs).where(eq(configs.deviceId, slow.id));
    expect(versions.length).toBeGreaterThan(0);
    expect(versions.map((v) => v.seenCount)).toEqual(versions.map(() => 1));
  }, 120_000);

  it("after kill -9 of a collector mid-run, its lease runs out and another collector of the zone finishes the job", async () => {
    const second = remoteCollector([
      "--server",
      `http://127.0.0.1:${port}`,
      "--allow-http",
      "--enroll",
      zoneA.enrollment_key,
      "--name",
      "site-a-2",
    ]);
    await until(
      "the second collector to enroll",
      () => t.db.select().from(remoteCollectors).where(eq(remoteCollectors.name, "site-a-2")),
      (r) => r.length === 1 && r[0]!.lastSeenAt !== null,
      SLOW,
    );
    const slow = await device("site-a-slow-2", zoneA.id, 1500);
    const job = await download(slow.id);
    const running = await until(
      "the job to start",
      () => getJob(t.db, job.id),
      (j) => j?.state === "running",
      SLOW,
    );
    const victim = running!.leaseOwner!.endsWith(":site-a-1") ? siteA : second;
    const survivor = victim === siteA ? "site-a-2" : "site-a-1";
    stopGroup(victim, "SIGKILL");
    const end = await finished(job.id);
    expect(end.outcome).toBe("success");
    const [upload] = await t.db.select().from(collectorUploads).where(eq(collectorUploads.jobId, job.id));
    const [by] = await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.id, upload!.collectorId));
    expect(by!.name).toBe(survivor);
    if (victim === siteA) siteA = second;
  }, 120_000);

  it("stops a revoked collector at once; its credential is refused from then on", async () => {
    const [b] = await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.name, "site-b-1"));
    const revoked = await t.call(`/api/v1/zones/${zoneB.id}/collectors/${b!.id}/revoke`, {
      method: "POST",
      token: admin,
    });
    expect(revoked.status).toBe(200);
    const code = await siteB.exited;
    expect(code).toBe(3);
    expect(siteB.output()).toMatch(/revoked or deleted/);
    const zones = await t.call(`/api/v1/zones/${zoneB.id}/collectors`, { token: admin });
    expect(zones.body.data[0]).toMatchObject({ name: "site-b-1", revoked: true, alive: false });
    // Its zone's jobs now wait: none of them fails.
    const waiting = await device("site-b-rtr-2", zoneB.id);
    const job = await download(waiting.id);
    // A zone A job queued after it and finished shows the collectors have polled since, and passed this one by.
    const later = await device("site-a-after-revoke", zoneA.id);
    expect((await finished((await download(later.id)).id)).outcome).toBe("success");
    expect((await getJob(t.db, job.id))!.state).toBe("queued");
  }, 60_000);

  it("refuses a server whose certificate it cannot verify, and trusts it with --ca", async () => {
    const dir = tempDir("netkeep-tls-");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    const tlsPort = await freePort();
    const tls = serve({
      fetch: t.app.fetch,
      port: tlsPort,
      hostname: "127.0.0.1",
      createServer: createHttpsServer,
      serverOptions: { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
    });
    try {
      const fresh = await zone("site-tls");
      const untrusted = remoteCollector(["--server", `https://127.0.0.1:${tlsPort}`, "--enroll", fresh.enrollment_key]);
      expect(await untrusted.exited).not.toBe(0);
      expect(untrusted.output()).toMatch(/certificate is not trusted/);
      const plain = remoteCollector(["--server", `http://127.0.0.1:${port}`, "--enroll", fresh.enrollment_key]);
      expect(await plain.exited).not.toBe(0);
      expect(plain.output()).toMatch(/--allow-http/);
      const trusted = remoteCollector([
        "--server",
        `https://127.0.0.1:${tlsPort}`,
        "--enroll",
        fresh.enrollment_key,
        "--ca",
        join(dir, "cert.pem"),
        "--name",
        "tls-1",
      ]);
      await until(
        "the collector to enroll over TLS",
        () => t.db.select().from(remoteCollectors).where(eq(remoteCollectors.name, "tls-1")),
        (r) => r.length === 1 && r[0]!.lastSeenAt !== null,
        SLOW,
      );
      stopGroup(trusted, "SIGTERM");
    } finally {
      (tls as unknown as { closeAllConnections(): void }).closeAllConnections();
      tls.close();
    }
  }, 60_000);
});
