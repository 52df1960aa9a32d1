import { createServer, type Server, type Socket } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type WorkerOptions } from "../../collector/worker.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { devices, jobs } from "../../src/db/schema/index.ts";
import { enqueueDeviceJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { createLogger } from "../../src/kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../helpers/collector.ts";
import { configBlocks, startFakeDevice, type FakeDevice, type FakeDeviceOptions } from "../helpers/fake-device.ts";
import { freePort } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";

/**
 * What the collector does when a device misbehaves: every fault ends the job with an outcome a person can act
 * on, in bounded time and memory, with the last lines seen and never a secret; retryable failures are retried
 * with a growing backoff, the others are not; a changed host key is refused until someone accepts it.
 */

const USERNAME = "netops";
const PASSWORD = "Fault-Test-Pass-7781";
const HOSTNAME = "edge-1";
const BANNER = `\r\nAuthorized access only: ${HOSTNAME} lab router\r\n\r\n`;
const CONFIG_COMMAND = IOS_CONFIG_COMMAND;
const RUNNING_CONFIG = [
  "hostname edge-1",
  "!",
  "interface GigabitEthernet0/1",
  " description uplink to core",
  "!",
  "end",
];
const { prompt: PROMPT, script: iosAnswer } = iosScript(HOSTNAME, RUNNING_CONFIG);

let t: TestContext;
let token: string;
let iosTemplate: number;
const started: FakeDevice[] = [];
const servers: Server[] = [];
let names = 0;

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  iosTemplate = await builtinTemplateId(t, "cisco-ios");
});
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  servers.forEach((s) => s.close());
  await t.close();
});

async function fakeIos(options: Partial<FakeDeviceOptions> = {}): Promise<FakeDevice> {
  const device = await startFakeDevice({
    script: iosAnswer,
    initPrompt: BANNER + PROMPT,
    configCommand: CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
    ...options,
  });
  started.push(device);
  return device;
}

const addDevice = (port: number, password = PASSWORD) =>
  addLoopbackDevice(t, token, {
    port,
    templateId: iosTemplate,
    username: USERNAME,
    password,
    name: `fault-device-${++names}`,
  });

const deviceState = async (id: number) =>
  (await t.call(`/api/v1/devices/${id}`, { token })).body.data as {
    status: string;
    last_seen_at: string | null;
    last_backup_at: string | null;
  };
const describeJob = (job: Job) => `${job.outcome}: ${job.message} ${JSON.stringify(job.result)}`;

/** The expected configuration: the template drops "Building configuration..."; the collector stores "\n" line ends. */
const storedRunningConfig = RUNNING_CONFIG.join("\n") + "\n";

describe("a healthy device (the baseline the faults are measured against)", () => {
  it("stores the configuration and marks the device up, seen and backed up", async () => {
    const fake = await fakeIos();
    const id = await addDevice(fake.port);
    expect(await deviceState(id)).toMatchObject({ status: "unknown", last_seen_at: null, last_backup_at: null });
    const before = Date.now();
    const job = await downloadOnce(t, id);
    expect(job.outcome, describeJob(job)).toBe("success");
    expect(fake.unexpected).toEqual([]);
    expect((await latestConfigs(t, id)).get(CONFIG_COMMAND)).toBe(storedRunningConfig);
    expect(job.result).toMatchObject({ commands: 4, changed: 4 });
    expect(job.result!.duration_ms).toBeGreaterThan(0);
    expect(job.result!.bytes).toBeGreaterThanOrEqual(storedRunningConfig.length);
    expect(JSON.stringify(job)).not.toContain(PASSWORD);
    const state = await deviceState(id);
    expect(state.status).toBe("up");
    expect(Date.parse(state.last_seen_at!)).toBeGreaterThanOrEqual(before - 1000);
    expect(state.last_backup_at).toBe(state.last_seen_at);
  });
});

describe("faults inside the session", () => {
  it("a device that never sends a prompt: prompt_not_found, with the last lines it did send", async () => {
    const fake = await fakeIos({ faults: { neverPrompt: true } });
    const id = await addDevice(fake.port);
    const startedAt = Date.now();
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 800 } });
    expect(job.outcome, describeJob(job)).toBe("prompt_not_found");
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(job.message).toMatch(/no prompt .*check the template's prompt/);
    expect(job.result!.last_lines).toEqual([`Authorized access only: ${HOSTNAME} lab router`]);
    expect(job.result!.duration_ms).toBeGreaterThanOrEqual(800);
    // It answered SSH and logged us in: it is up, though nothing was backed up.
    const state = await deviceState(id);
    expect(state.status).toBe("up");
    expect(state.last_seen_at).not.toBeNull();
    expect(state.last_backup_at).toBeNull();
  });

  it("a device that stalls in the middle of its output: timeout (retryable), with the last lines before the stall", async () => {
    const fake = await fakeIos({ faults: { hugeOutputBytes: 200_000, stallAfterBytes: 20_000 } });
    const id = await addDevice(fake.port);
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 800 } });
    // The prompt had matched (login, setup commands), so the template fits: the device stopped answering.
    expect(job.outcome, describeJob(job)).toBe("timeout");
    expect(job.message).toBe(
      `the device went silent for 0.8 s while running '${CONFIG_COMMAND}' without returning to its prompt; ` +
        "if the last lines end in a pager or question, add it to the template",
    );
    const lastLines = job.result!.last_lines as string[];
    expect(lastLines.length).toBeGreaterThan(0);
    expect(
      lastLines.every((l) => /^(?:interface |\s|!)/.test(l)),
      lastLines.join("\n"),
    ).toBe(true);
    expect(await latestConfigs(t, id)).toEqual(new Map());
    const state = await deviceState(id);
    expect(state.status).toBe("up");
    expect(state.last_backup_at).toBeNull();
  });

  it("a device that drops the connection mid-output: error naming the dropped connection, nothing stored", async () => {
    const fake = await fakeIos({ faults: { hugeOutputBytes: 200_000, dropAfterBytes: 20_000 } });
    const id = await addDevice(fake.port);
    const startedAt = Date.now();
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 5000 } });
    expect(job.outcome, describeJob(job)).toBe("error");
    expect(Date.now() - startedAt, "noticed at once, not at the idle timeout").toBeLessThan(4000);
    expect(job.message).toBe(
      `the device closed the connection while '${CONFIG_COMMAND}' was running; its output is incomplete`,
    );
    expect((job.result!.last_lines as string[]).length).toBeGreaterThan(0);
    expect(await latestConfigs(t, id)).toEqual(new Map());
    expect((await deviceState(id)).status).toBe("up");
  });

  it("a 5 MB configuration is stored completely, byte for byte", async () => {
    const size = 5 * 1024 * 1024;
    const fake = await fakeIos({ faults: { hugeOutputBytes: size } });
    const id = await addDevice(fake.port);
    const job = await downloadOnce(t, id);
    expect(job.outcome, describeJob(job)).toBe("success");
    const stored = (await latestConfigs(t, id)).get(CONFIG_COMMAND)!;
    // Sent with the "\r\n" line ends the device uses; stored with "\n".
    const expected = [...configBlocks(size, "\r\n")].join("").replace(/\r\n/g, "\n");
    expect(stored.length).toBe(expected.length);
    expect(stored === expected).toBe(true);
  });

  it("a 50 MB answer fails cleanly at the 32 MB cap: no hang, no memory blow-up, nothing stored", async () => {
    expect(DEFAULT_LIMITS.maxOutputBytes).toBe(32 * 1024 * 1024);
    const fake = await fakeIos({ faults: { hugeOutputBytes: 50 * 1024 * 1024 } });
    const id = await addDevice(fake.port);
    let peak = 0;
    const baseline = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - baseline)), 50);
    const startedAt = Date.now();
    let job: Job;
    try {
      job = await downloadOnce(t, id);
    } finally {
      clearInterval(sampler);
    }
    const elapsed = Date.now() - startedAt;
    expect(job.outcome, describeJob(job)).toBe("error");
    expect(job.message).toBe(`the output of '${CONFIG_COMMAND}' exceeded 32 MB; the device may be looping`);
    expect((job.result!.last_lines as string[]).length, "what the device was repeating").toBe(10);
    expect(elapsed).toBeLessThan(15_000);
    // The 32 MB kept (one byte per character) plus the fake device's side of the stream, in this same process.
    expect(peak, `peak RSS growth ${Math.round(peak / 1048576)} MB`).toBeLessThan(300 * 1024 * 1024);
    expect(await latestConfigs(t, id)).toEqual(new Map());
  }, 30_000);
});

/** A collector's worker loop in this process, logging into `log` so a test can look for secrets there. */
function runWorker(
  clock: { now(): Date },
  options: Partial<WorkerOptions> = {},
  deps: { connectTimeoutMs?: number; idleTimeoutMs?: number } = {},
) {
  const log: string[] = [];
  const worker = startWorker(
    {
      db: t.db,
      secrets: t.secrets,
      clock,
      logger: createLogger((line) => log.push(line)),
      owner: "faults-worker",
      limits: { ...DEFAULT_LIMITS, idleTimeoutMs: deps.idleTimeoutMs ?? 2000 },
      connectTimeoutMs: deps.connectTimeoutMs ?? 5000,
    },
    { concurrency: 2, pollIntervalMs: 20, leaseMs: 60_000, jobTimeLimitMs: 10_000, ...options },
  );
  return { worker, log };
}

const enqueue = async (deviceId: number, now: Date, maxAttempts: number, priority = 50) =>
  (await enqueueDeviceJob(t.db, { type: "download", deviceId, trigger: "api", priority, maxAttempts }, now)).job;
const readJob = async (id: number) => (await getJob(t.db, id))!;

/**
 * Shows the worker has looked at the queue since the clock last moved: a job queued now, on a device nothing
 * listens for, gets its one attempt. A job that was due then (queued earlier, so claimed first) has been claimed too.
 */
async function workerPolledSince(clock: { now(): Date }) {
  const probe = await enqueue(await addDevice(await freePort()), clock.now(), 1);
  await until(
    "the worker to try a job queued after the clock moved",
    async () => (await readJob(probe.id)).state === "finished",
  );
}

describe("retries, through the collector's worker loop", () => {
  it("a wrong password: auth_failed, never retried, and the password is nowhere in the job or the log", async () => {
    const fake = await fakeIos();
    const wrong = "Wrong-Secret-4417";
    const id = await addDevice(fake.port, wrong);
    const clock = manualClock(new Date());
    const job = await enqueue(id, clock.now(), 3);
    const { worker, log } = runWorker(clock);
    try {
      await until("the job to finish", async () => (await readJob(job.id)).state === "finished");
      // Long past any backoff, it has not been tried again.
      clock.advance(3_600_000);
      await workerPolledSince(clock);
    } finally {
      await worker.stop();
    }
    const done = await readJob(job.id);
    expect(done).toMatchObject({
      state: "finished",
      outcome: "auth_failed",
      attempts: 1,
      maxAttempts: 3,
      leaseOwner: null,
    });
    expect(done.message).toBe("the device refused the credentials");
    expect(fake.sessions).toBe(0);
    const [row] = await t.db.select().from(jobs).where(eq(jobs.id, job.id));
    for (const secret of [wrong, PASSWORD]) {
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(log.join("\n")).not.toContain(secret);
    }
    // It answered and refused us: up, never backed up.
    expect(await deviceState(id)).toMatchObject({ status: "up", last_backup_at: null });
  });

  it("connection refused: unreachable, retried after 30 s, then after 2 min, and stored once the device is back", async () => {
    const port = await freePort(); // nothing listens here until the device "comes back"
    const id = await addDevice(port);
    const clock = manualClock(new Date());
    const job = await enqueue(id, clock.now(), 3);
    const { worker } = runWorker(clock);
    try {
      await until(
        "the first attempt",
        async () => (await readJob(job.id)).attempts === 1 && (await readJob(job.id)).state === "queued",
      );
      let j = await readJob(job.id);
      expect(j.outcome).toBe("unreachable");
      expect(j.message).toContain("ECONNREFUSED");
      expect(j.runAfter.getTime()).toBe(clock.now().getTime() + 30_000);
      expect(await deviceState(id)).toMatchObject({ status: "unreachable", last_seen_at: null });

      clock.advance(29_000);
      await workerPolledSince(clock);
      expect((await readJob(job.id)).attempts, "not before its backoff").toBe(1);
      clock.advance(1_000);
      await until(
        "the second attempt",
        async () => (await readJob(job.id)).attempts === 2 && (await readJob(job.id)).state === "queued",
      );
      j = await readJob(job.id);
      expect(j.outcome).toBe("unreachable");
      expect(j.runAfter.getTime()).toBe(clock.now().getTime() + 120_000);

      await fakeIos({ port });
      clock.advance(120_000);
      await until("the third attempt", async () => (await readJob(job.id)).state === "finished");
    } finally {
      await worker.stop();
    }
    expect(await readJob(job.id)).toMatchObject({ state: "finished", outcome: "success", attempts: 3 });
    expect((await latestConfigs(t, id)).get(CONFIG_COMMAND)).toBe(storedRunningConfig);
    const state = await deviceState(id);
    expect(state.status).toBe("up");
    expect(state.last_backup_at).toBe(new Date(clock.now()).toISOString());
  });
});

describe("many sessions in one collector", () => {
  it("run side by side without stalling on each other's database writes", async () => {
    const fakes = await Promise.all(Array.from({ length: 6 }, () => fakeIos({ latencyMs: 20 })));
    const ids: number[] = [];
    for (const f of fakes) ids.push(await addDevice(f.port));
    const queued: Job[] = [];
    for (const id of ids) queued.push(await enqueue(id, new Date(), 1));
    const { worker, log } = runWorker({ now: () => new Date() }, { concurrency: 6 });
    const startedAt = Date.now();
    try {
      await until("every job to finish", async () =>
        (await Promise.all(queued.map((j) => readJob(j.id)))).every((j) => j.state === "finished"),
      );
    } finally {
      await worker.stop();
    }
    // A claim or a heartbeat that met another job's open transaction used to block the process for 10 s, then fail.
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(
      log.filter((l) => JSON.parse(l).level !== "info"),
      log.join("\n"),
    ).toEqual([]);
    for (const j of queued) expect((await readJob(j.id)).outcome).toBe("success");
    expect(fakes.map((f) => f.maxConcurrentSessions)).toEqual(fakes.map(() => 1));
  });
});

describe("the job time limit", () => {
  it("a device that keeps paging forever, never silent, is cut off at the time limit: timeout, retried after 30 s", async () => {
    let page = 0;
    const nextPage = () => `\r          \rlogging host 192.0.2.${++page % 250}\r\n --More-- `;
    const fake = await fakeIos({
      keys: [" "],
      latencyMs: 100,
      script: (line) =>
        line === CONFIG_COMMAND
          ? `${CONFIG_COMMAND}\r\nhostname edge-1\r\n --More-- `
          : line === " "
            ? nextPage()
            : iosAnswer(line),
    });
    const id = await addDevice(fake.port);
    const clock = manualClock(new Date());
    const job = await enqueue(id, clock.now(), 2);
    const { worker } = runWorker(clock, { jobTimeLimitMs: 2000 }, { idleTimeoutMs: 1000 });
    const startedAt = Date.now();
    try {
      await until("the first attempt to end", async () => {
        const j = await readJob(job.id);
        return j.attempts === 1 && j.state === "queued";
      });
    } finally {
      await worker.stop();
    }
    const elapsed = Date.now() - startedAt;
    const ended = await readJob(job.id);
    expect(ended.outcome, describeJob(ended)).toBe("timeout");
    expect(ended.message).toBe("the job ran past its time limit of 2 s");
    expect(ended.runAfter.getTime(), "a timeout is retried, after the first backoff").toBe(
      clock.now().getTime() + 30_000,
    );
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(4000);
    expect(page, "it kept answering: the idle timeout alone would never fire").toBeGreaterThan(5);
    expect(await latestConfigs(t, id)).toEqual(new Map());
    // It answered all along: up, not unreachable.
    expect((await deviceState(id)).status).toBe("up");
    await t.db.delete(jobs).where(eq(jobs.id, job.id)); // not for the workers of later tests
  });

  it("a device that accepts TCP and never speaks SSH holds its worker only until the time limit, not the connect timeout", async () => {
    const sockets = new Set<Socket>();
    const mute = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    servers.push(mute);
    await new Promise<void>((r) => mute.listen(0, "127.0.0.1", r));
    const hungId = await addDevice((mute.address() as { port: number }).port);
    const healthy = await fakeIos();
    const healthyId = await addDevice(healthy.port);
    // One slot; the hung device's job is claimed first.
    const hung = await enqueue(hungId, new Date(), 1, 100);
    const next = await enqueue(healthyId, new Date(), 1, 0);
    const { worker } = runWorker(
      { now: () => new Date() },
      { concurrency: 1, jobTimeLimitMs: 1500 },
      { connectTimeoutMs: 20_000 },
    );
    const startedAt = Date.now();
    try {
      await until("both jobs to finish", async () => (await readJob(next.id)).state === "finished", Boolean, {
        tries: 750,
      });
    } finally {
      await worker.stop();
      sockets.forEach((s) => s.destroy());
    }
    const elapsed = Date.now() - startedAt;
    const hungJob = await readJob(hung.id);
    expect(hungJob.outcome, describeJob(hungJob)).toBe("timeout");
    expect(hungJob.message).toBe("the job ran past its time limit of 1.5 s");
    expect(hungJob.result!.duration_ms).toBeLessThan(3000);
    expect((await readJob(next.id)).outcome).toBe("success");
    expect(elapsed, "the next job ran right after the limit").toBeLessThan(5000);
    expect(await deviceState(hungId)).toMatchObject({ status: "unreachable", last_seen_at: null });
  });
});

describe("a changed host key", () => {
  const pinned = async (id: number) =>
    (await t.db.select({ fp: devices.hostKeyFingerprint }).from(devices).where(eq(devices.id, id)))[0]!.fp;
  const reset = (id: number, body?: unknown, as = token) =>
    t.call(`/api/v1/devices/${id}/host-key/reset`, { method: "POST", token: as, body });

  it("is refused with host_key_changed naming both keys, until the new key is accepted through the API", async () => {
    const original = await fakeIos();
    const id = await addDevice(original.port);
    expect((await downloadOnce(t, id)).outcome).toBe("success");
    expect(await pinned(id), "pinned on first use").toBe(original.hostKeyFingerprint);

    // The device is replaced: same address and port, a new key.
    await original.close();
    const replacement = await fakeIos({ port: original.port });
    expect(replacement.hostKeyFingerprint).not.toBe(original.hostKeyFingerprint);
    const refused = await downloadOnce(t, id);
    expect(refused.outcome, describeJob(refused)).toBe("host_key_changed");
    expect(refused.message).toContain(`pinned ${original.hostKeyFingerprint}`);
    expect(refused.message).toContain(`presented ${replacement.hostKeyFingerprint}`);
    expect(refused.message, "says how to accept the key").toMatch(
      new RegExp(`: POST /api/v1/devices/${id}/host-key/reset$`),
    );
    expect(replacement.sessions, "no login: the credentials never reach an unverified host").toBe(0);
    expect(await pinned(id)).toBe(original.hostKeyFingerprint);

    // Pinning some other key explicitly: still refused.
    const other = "SHA256:" + "A".repeat(43);
    const pinOther = await reset(id, { fingerprint: other });
    expect(pinOther.status, JSON.stringify(pinOther.body)).toBe(200);
    expect(pinOther.body.data).toEqual({
      device_id: id,
      host_key_fingerprint: other,
      previous_fingerprint: original.hostKeyFingerprint,
    });
    expect((await downloadOnce(t, id)).outcome).toBe("host_key_changed");

    // Pinning the key the device really has: accepted.
    const pinNew = await reset(id, { fingerprint: replacement.hostKeyFingerprint });
    expect(pinNew.body.data).toEqual({
      device_id: id,
      host_key_fingerprint: replacement.hostKeyFingerprint,
      previous_fingerprint: other,
    });
    const accepted = await downloadOnce(t, id);
    expect(accepted.outcome, describeJob(accepted)).toBe("unchanged");
    expect(await pinned(id)).toBe(replacement.hostKeyFingerprint);

    // Without a body the pin is forgotten, and the next connection pins what it sees.
    const forget = await reset(id);
    expect(forget.body.data).toEqual({
      device_id: id,
      host_key_fingerprint: null,
      previous_fingerprint: replacement.hostKeyFingerprint,
    });
    expect(await pinned(id)).toBeNull();
    expect((await downloadOnce(t, id)).outcome).toBe("unchanged");
    expect(await pinned(id)).toBe(replacement.hostKeyFingerprint);

    const log = await t.call(
      `/api/v1/activity-logs?filter[action]=device.host_key_reset&filter[subject_id]=${id}&sort=id`,
      { token },
    );
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.data.map((e: { changes: unknown }) => e.changes)).toEqual([
      { host_key_fingerprint: { old: original.hostKeyFingerprint, new: other } },
      { host_key_fingerprint: { old: other, new: replacement.hostKeyFingerprint } },
      { host_key_fingerprint: { old: replacement.hostKeyFingerprint, new: null } },
    ]);
  });

  it("POST /devices/{id}/host-key/reset needs devices.write, hides devices outside the scope, and checks the fingerprint", async () => {
    const fake = await fakeIos();
    const id = await addDevice(fake.port);
    const reader = await t.token(["devices.read"]);
    expect((await reset(id, undefined, reader)).status).toBe(403);
    expect((await reset(999_999)).status).toBe(404);

    await t.role({ name: "branch-hostkeys", tags: ["branch-only"] });
    const branch = await t.token(undefined, { role: "branch-hostkeys" });
    const hidden = await reset(id, undefined, branch);
    expect(hidden.status).toBe(404);
    expect(hidden.body.message).toBe(`Device ${id} not found`);

    const bad = await reset(id, { fingerprint: "MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.fingerprint).toEqual([
      "fingerprint must be an OpenSSH SHA-256 fingerprint: SHA256: followed by 43 base64 characters",
    ]);
    const empty = await reset(id, {});
    expect(empty.status).toBe(200);
    expect(empty.body.data.host_key_fingerprint).toBeNull();
  });
});
