import { createServer, type Server } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDiscoverJob } from "../../collector/discover-job.ts";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { devices, events } from "../../src/db/schema/index.ts";
import { claimNextJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { getCollectorSettings } from "../../src/platform/settings/service.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { builtinTemplateId } from "../helpers/collector.ts";
import { generateHostKey, startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { startFakeTelnet, type FakeTelnet } from "../helpers/fake-telnet.ts";
import { FAMILY_TEMPLATES, findOxidizedFixturesDir, loadSimulation } from "../helpers/simulation.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSimulation } from "../helpers/simulation.ts";

/**
 * Discovery end to end: simulated devices of several families (the Oxidized recordings and the written sessions)
 * on loopback addresses 127.0.0.20-127.0.0.40, some only on Telnet or a non-standard port, some needing enable,
 * and addresses where nothing listens; the API queues the scan and the collector's discover job runs it.
 * Listeners just outside the range record every connection: a scan must never reach them.
 */

const oxidizedDir = findOxidizedFixturesDir();
if (!oxidizedDir && process.env.CI) throw new Error("the Oxidized recordings are missing: ../shared/fixtures/oxidized");

const OXIDIZED = { username: "oxidized", password: "replay-pass" };
const WRITTEN = { username: "netkeep", password: "replay-pass", enable: "enable-pass" };
const sessionsRoot = join(import.meta.dirname, "..", "fixtures", "sessions");

/** The simulated devices: address, port, family, and how it logs in. */
const RECORDED = [
  "ios#C9200L-24P-4G_17.09.04a",
  "vyos#Supermicro_1.4.3",
  "nxos#C93180YC-FX3J_10.4.5",
  "asa#5512_9.12-4-67_single-context",
  "h3c#5130-48G_7.1.070",
  "aoscx#6100-48G_PL.10.10.1090",
];
const WRITTEN_SESSIONS = ["dell-os6/n2048-6.6.yaml", "adtran-aos/netvanta-3448-r13.yaml"];

let t: TestContext;
let admin: string;
const started: { close(): Promise<void> }[] = [];
/** Connections each watcher outside the scanned range saw. */
const outside = new Map<string, number>();
const expected: { address: string; port: number; template: string; cred: "oxidized" | "written" }[] = [];
let oxidizedSet: number;
let writtenSet: number;

const deps = (clock = { now: () => new Date() }) => ({
  db: t.db,
  secrets: t.secrets,
  clock,
  logger: silentLogger,
  owner: "test-collector",
  limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 5_000, optionalIdleTimeoutMs: 1_000 },
  connectTimeoutMs: 3_000,
  settings: () => getCollectorSettings(t.db),
});

/** Claims and runs the next queued job as a collector does (its clock `clock`), and returns it finished. */
async function runNext(clock?: { now(): Date }): Promise<Job> {
  const job = await claimNextJob(t.db, "test-collector", new Date(), 120_000);
  if (!job) throw new Error("no job to claim");
  if (job.type === "discover") await runDiscoverJob(deps(clock), job, new AbortController().signal);
  else if (job.type === "download") await runDownloadJob(deps(clock), job, new AbortController().signal);
  else throw new Error(`unexpected ${job.type} job`);
  return (await getJob(t.db, job.id))!;
}

async function watch(host: string, port: number): Promise<void> {
  const key = `${host}:${port}`;
  outside.set(key, 0);
  const server: Server = createServer((socket) => {
    outside.set(key, outside.get(key)! + 1);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  started.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
}

async function credentialSet(name: string, login: { username: string; password: string; enable?: string }) {
  const res = await t.call("/api/v1/device-credentials", {
    method: "POST",
    token: admin,
    body: {
      cred_name: name,
      cred_username: login.username,
      cred_password: login.password,
      ...(login.enable ? { cred_enable_password: login.enable } : {}),
      cred_discovery: true,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as number;
}

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  // A set no device takes first, so every device sees a failed try before the one that works.
  await credentialSet("nobody", { username: "nobody", password: "wrong-pass" });
  oxidizedSet = await credentialSet("oxidized", OXIDIZED);
  writtenSet = await credentialSet("written", WRITTEN);

  let host = 20;
  if (oxidizedDir)
    for (const [i, name] of RECORDED.entries()) {
      const address = `127.0.0.${host++}`;
      // Every third one on a port of its own.
      const port = i % 3 === 2 ? 2222 : 22;
      started.push(
        await startFakeDevice({
          simulation: loadSimulation(join(oxidizedDir, `${name}#simulation.yaml`)),
          auth: OXIDIZED,
          host: address,
          port,
        }),
      );
      expected.push({ address, port, template: FAMILY_TEMPLATES[name.split("#")[0]!]!, cred: "oxidized" });
      host++; // a silent address between two devices
    }
  for (const file of WRITTEN_SESSIONS) {
    const address = `127.0.0.${host++}`;
    started.push(
      await startFakeDevice({
        simulation: parseSimulation(readFileSync(join(sessionsRoot, file), "utf8"), file),
        auth: WRITTEN,
        host: address,
        port: 22,
      }),
    );
    expected.push({ address, port: 22, template: file.split("/")[0]!, cred: "written" });
  }
  // Telnet only: an IOS-like device answering on port 23 alone.
  const telnetAddress = `127.0.0.${host++}`;
  const prompt = "tn-edge-1#";
  started.push(
    await startFakeTelnet({
      host: telnetAddress,
      port: 23,
      auth: OXIDIZED,
      initPrompt: prompt,
      script: (line) =>
        line === "show version"
          ? `${line}\r\nCisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.2(7)E3, RELEASE SOFTWARE (fc3)\r\ncisco WS-C2960-24TT-L (PowerPC405) processor with 65536K bytes of memory.\r\nProcessor board ID FOC1010X1YZ\r\n${prompt}`
          : line === "exit"
            ? { answer: "exit\r\n", close: true }
            : `${line}\r\n${prompt}`,
    }),
  );
  expected.push({ address: telnetAddress, port: 23, template: "cisco-ios", cred: "oxidized" });
  expect(host).toBeLessThanOrEqual(40);
  await watch("127.0.0.19", 22);
  await watch("127.0.0.41", 22);
  await watch("127.0.0.41", 23);
}, 60_000);

afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  await t.close();
});

describe("POST /devices/discover", () => {
  it("refuses bad ranges with a 422 that says why", async () => {
    const bad = await t.call("/api/v1/devices/discover", {
      method: "POST",
      token: admin,
      body: { addresses: ["10.0.0.0/8", "192.0.2.40-192.0.2.10", "no-such-device.invalid", "not an address"] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({
      "addresses.0": ["10.0.0.0/8 is a /8: a subnet may be at most a /20 (4096 addresses); split it"],
      "addresses.1": ["192.0.2.40-192.0.2.10 is reversed: its end comes before its start"],
      "addresses.2": ["no-such-device.invalid does not resolve to an address"],
      "addresses.3": ["not an address is not an address, host name, range (a.b.c.d-e.f.g.h) or subnet (a.b.c.d/nn)"],
    });
  });

  it("finds each device's port, credential set and template, and never connects outside the range", async () => {
    const queued = await t.call("/api/v1/devices/discover", {
      method: "POST",
      token: admin,
      body: { addresses: ["127.0.0.20-127.0.0.40"], ports: [22, 23, 2222] },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const job = await runNext();
    expect(job.outcome, job.message ?? "").toBe("success");
    const result = job.result as {
      found: Record<string, unknown>[];
      silent: number;
      scanned: number;
      connects: number;
    };
    expect(result.scanned).toBe(21);
    expect(result.silent).toBe(21 - expected.length);
    expect(result).toMatchObject({ answered: expected.length, not_probed: 0 });
    const byAddress = new Map(result.found.map((f) => [f.address as string, f]));
    for (const e of expected) {
      const f = byAddress.get(e.address);
      expect(f, e.address).toBeDefined();
      expect(
        { port: f!.port, template: f!.template, credential_id: f!.credential_id, problem: f!.problem },
        `${e.address} (${e.template})`,
      ).toEqual({
        port: e.port,
        template: e.template,
        credential_id: e.cred === "oxidized" ? oxidizedSet : writtenSet,
        problem: null,
      });
    }
    expect(byAddress.size).toBe(expected.length);
    // The Telnet device's inventory, from its version output and prompt.
    const telnet = byAddress.get(expected.at(-1)!.address)!;
    expect(telnet).toMatchObject({
      protocol: "telnet",
      model: "WS-C2960-24TT-L",
      serial: "FOC1010X1YZ",
      hostname: "tn-edge-1",
      os_version: "15.2(7)E3",
    });
    expect([...outside.values()]).toEqual([0, 0, 0]);

    const list = await t.call("/api/v1/discovery/candidates?filter[state]=pending&per_page=100", { token: admin });
    expect(list.body.meta.total).toBe(expected.length);
    // The sets' secrets are nowhere in what the scan reports, nor in the candidates.
    for (const secret of [OXIDIZED.password, WRITTEN.password, WRITTEN.enable, "wrong-pass"]) {
      expect(JSON.stringify(await getJob(t.db, job.id))).not.toContain(secret);
      expect(JSON.stringify(list.body)).not.toContain(secret);
    }
  }, 120_000);

  it("adopts: devices named after their host names, backed up, and never created twice", async () => {
    const all = await t.call("/api/v1/discovery/candidates/adopt", { method: "POST", token: admin });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.data).toHaveLength(expected.length);
    const telnet = all.body.data.find((c: { address: string }) => c.address === expected.at(-1)!.address);
    const device = (await t.call(`/api/v1/devices/${telnet.device_id}`, { token: admin })).body.data;
    expect(device).toMatchObject({
      device_name: "tn-edge-1",
      device_ip: expected.at(-1)!.address,
      device_template_id: await builtinTemplateId(t, "cisco-ios"),
      device_cred_id: oxidizedSet,
      device_discover_credentials: true,
      device_serial: "FOC1010X1YZ",
      device_os_version: "15.2(7)E3",
    });
    // Filterable by inventory.
    const bySerial = await t.call("/api/v1/devices?filter[device_serial]=foc1010x1yz", { token: admin });
    expect(bySerial.body.data.map((d: { id: number }) => d.id)).toEqual([telnet.device_id]);

    // A second scan of the same range, adopting: the addresses are reported as devices, nothing new is made.
    const before = (await t.db.select({ id: devices.id }).from(devices)).length;
    await t.call("/api/v1/devices/discover", {
      method: "POST",
      token: admin,
      body: { addresses: ["127.0.0.20-127.0.0.40"], ports: [22, 23, 2222], adopt: true },
    });
    // Backups of the adopted devices were queued first; the scan follows them.
    let job: Job;
    do job = await runNext();
    while (job.type !== "discover");
    expect((job.result as { existing: unknown[] }).existing).toHaveLength(expected.length);
    expect((await t.db.select({ id: devices.id }).from(devices)).length).toBe(before);
  }, 180_000);
});

describe("scan presets", () => {
  it("a discovery_scan task scans only its preset's addresses and adopts what it finds", async () => {
    await watch("127.0.0.44", 22);
    await watch("127.0.0.48", 22);
    const prompt = "branch-46#";
    started.push(
      await startFakeDevice({
        script: (line) =>
          line === "show version"
            ? `${line}\r\nCisco IOS Software, Version 15.2(7)E3\r\ncisco WS-C2960X (PowerPC405) processor\r\n${prompt}`
            : line === "exit"
              ? { answer: "exit\r\n", close: true }
              : `${line}\r\n${prompt}`,
        initPrompt: `\r\n${prompt}`,
        auth: OXIDIZED,
        host: "127.0.0.46",
        port: 22,
      }),
    );
    const preset = await t.call("/api/v1/discovery/presets", {
      method: "POST",
      token: admin,
      body: { name: "branch", targets: ["127.0.0.45-127.0.0.47"], ports: [22], adopt: true, connects_per_second: 20 },
    });
    expect(preset.status, JSON.stringify(preset.body)).toBe(201);
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: {
        task_name: "branch scan",
        task_type: "discovery_scan",
        task_cron: "0 4 * * *",
        scan_preset_id: preset.body.data.id,
      },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    expect(task.body.data.scan_preset_id).toBe(preset.body.data.id);
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status, JSON.stringify(run.body)).toBeLessThan(300);
    // Backups of the devices adopted before it run first (they were queued first, at a higher priority).
    let job: Job;
    do job = await runNext();
    while (job.type !== "discover");
    expect(job.result).toMatchObject({ scanned: 3, answered: 1, silent: 2, adopted: 1 });
    expect([...outside.values()].every((n) => n === 0)).toBe(true);
    const [device] = await t.db.select().from(devices).where(eq(devices.ip, "127.0.0.46"));
    expect(device).toMatchObject({ name: "branch-46", credId: oxidizedSet, discoverCredentials: true });

    const wrongType = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: { task_name: "no preset", task_type: "discovery_scan", task_cron: "0 4 * * *" },
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors.scan_preset_id).toEqual(["scan_preset_id is required for discovery_scan tasks"]);
  }, 60_000);
});

describe("credential discovery", () => {
  it("a device whose credentials changed is rediscovered once, and an event says which set works now", async () => {
    const hostKey = generateHostKey().privateKey;
    const prompt = "moved-1#";
    const script = (line: string) =>
      line === "show version"
        ? `${line}\r\nCisco IOS Software, Version 15.2(7)E3\r\ncisco WS-C2960 (PowerPC405) processor\r\n${prompt}`
        : line === "show running-config"
          ? `${line}\r\nhostname moved-1\r\nend\r\n${prompt}`
          : line === "exit"
            ? { answer: "exit\r\n", close: true }
            : `${line}\r\n${prompt}`;
    const start = (auth: { username: string; password: string }) =>
      startFakeDevice({ script, initPrompt: `\r\n${prompt}`, auth, host: "127.0.0.50", port: 22, hostKey });
    let fake: FakeDevice | FakeTelnet = await start(OXIDIZED);
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "moved-1",
        device_ip: "127.0.0.50",
        device_vendor: "Cisco",
        device_template_id: await builtinTemplateId(t, "cisco-ios"),
        device_cred_id: oxidizedSet,
        device_discover_credentials: true,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id;
    const download = async () => {
      const res = await t.call(`/api/v1/download-now/${id}`, { token: admin });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return runNext();
    };
    expect((await download()).outcome).toBe("success");
    // The backup ran show version: the device's inventory follows it.
    const backedUp = (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
    expect(backedUp).toMatchObject({ device_os_version: "15.2(7)E3", device_model: "WS-C2960" });

    // The device's password changes to the other set's: the download finds that set and succeeds.
    await fake.close();
    fake = await start({ username: WRITTEN.username, password: WRITTEN.password });
    started.push(fake);
    const second = await download();
    expect(second.outcome, second.message ?? "").toMatch(/success|unchanged/);
    const device = (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
    expect(device.device_cred_id).toBe(writtenSet);
    const found = await t.db.select().from(events).where(eq(events.type, "device.credentials_discovered"));
    expect(found.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        credential_id: writtenSet,
        credential_name: "written",
        previous_credential_id: oxidizedSet,
      }),
    ]);
  }, 60_000);

  it("a device set to discover with no set yet finds one at its first backup", async () => {
    const prompt = "fresh-52#";
    started.push(
      await startFakeDevice({
        script: (line) =>
          line === "show running-config"
            ? `${line}\r\nhostname fresh-52\r\nend\r\n${prompt}`
            : line === "exit"
              ? { answer: "exit\r\n", close: true }
              : `${line}\r\n${prompt}`,
        initPrompt: `\r\n${prompt}`,
        auth: OXIDIZED,
        host: "127.0.0.52",
        port: 22,
      }),
    );
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "fresh-52",
        device_ip: "127.0.0.52",
        device_vendor: "Cisco",
        device_template_id: await builtinTemplateId(t, "cisco-ios"),
        device_discover_credentials: true,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // 0: no set (as rConfig answers).
    expect(created.body.data.device_cred_id).toBe(0);
    const id = created.body.data.id;
    expect((await t.call(`/api/v1/download-now/${id}`, { token: admin })).status).toBeLessThan(300);
    const job = await runNext();
    expect(job.outcome, job.message ?? "").toBe("success");
    const device = (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
    expect(device.device_cred_id).toBe(oxidizedSet);
    const [event] = await t.db
      .select()
      .from(events)
      .where(and(eq(events.type, "device.credentials_discovered"), eq(events.deviceId, id)));
    expect(event!.payload).toMatchObject({ credential_id: oxidizedSet, previous_credential_id: null });
  }, 60_000);

  it("a device whose credentials no set matches any more fails auth_failed after one search, saying so", async () => {
    const [before] = await t.db.select().from(devices).where(eq(devices.ip, "127.0.0.50"));
    const strangers = await startFakeDevice({
      script: () => "x\r\nmoved-1#",
      initPrompt: "\r\nmoved-1#",
      auth: { username: "someone-else", password: "unknown-pass" },
      host: "127.0.0.51",
      port: 22,
    });
    started.push(strangers);
    await t.db.update(devices).set({ ip: "127.0.0.51", hostKeyFingerprint: null }).where(eq(devices.id, before!.id));
    expect((await t.call(`/api/v1/download-now/${before!.id}`, { token: admin })).status).toBeLessThan(300);
    const job = await runNext();
    expect(job.outcome).toBe("auth_failed");
    expect(job.message).toMatch(/; credential discovery: no credential set marked for discovery logged in$/);
    // The set it had is kept; no event claims another works.
    const [after] = await t.db.select().from(devices).where(eq(devices.id, before!.id));
    expect(after!.credId).toBe(before!.credId);
    expect(
      await t.db
        .select()
        .from(events)
        .where(and(eq(events.type, "device.credentials_discovered"), eq(events.deviceId, before!.id))),
    ).toHaveLength(1);
  }, 60_000);

  it("stops trying an address after the hourly maximum of failed logins", async () => {
    await t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { collector: { discovery_tries_per_hour: 1 } },
    });
    const locked = await startFakeDevice({
      script: () => "x\r\n#",
      initPrompt: "#",
      auth: { username: "someone-else", password: "unknown-pass" },
      host: "127.0.0.60",
      port: 22,
    });
    started.push(locked);
    const scan = async (clock?: { now(): Date }) => {
      await t.call("/api/v1/devices/discover", {
        method: "POST",
        token: admin,
        body: { addresses: ["127.0.0.60"], ports: [22] },
      });
      const result = (await runNext(clock)).result as { connects: number; found: { problem: string }[] };
      return { connects: result.connects, problem: result.found[0]!.problem };
    };
    const capped = {
      problem:
        "not tried further: 1 failed logins to 127.0.0.60 within the hour (settings collector.discovery_tries_per_hour)",
    };
    // The probe and one login; not the other two sets.
    expect(await scan()).toEqual({ connects: 2, ...capped });
    // Within the hour: the probe alone.
    expect(await scan()).toEqual({ connects: 1, ...capped });
    // An hour later the failure no longer counts: one more login, then the maximum again.
    const later = new Date(Date.now() + 61 * 60_000);
    expect(await scan({ now: () => later })).toEqual({ connects: 2, ...capped });
  }, 60_000);

  it("a scan that reaches its connection limit says how many addresses it left unprobed", async () => {
    const preset = await t.call("/api/v1/discovery/presets", {
      method: "POST",
      token: admin,
      body: { name: "small", targets: ["127.0.0.70-127.0.0.74"], ports: [22], max_connects: 2 },
    });
    expect(preset.status, JSON.stringify(preset.body)).toBe(201);
    const run = await t.call(`/api/v1/discovery/presets/${preset.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    let job: Job;
    do job = await runNext();
    while (job.type !== "discover");
    expect(job.result).toMatchObject({
      scanned: 5,
      answered: 0,
      silent: 2,
      not_probed: 3,
      connects: 2,
      stopped: "the scan reached its connection limit",
    });
    expect(job.message).toBe(
      "0 of 5 addresses answered, 0 identified; the scan reached its connection limit (3 addresses not probed)",
    );
  }, 60_000);
});
