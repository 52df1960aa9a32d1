import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configChanges, configs, jobs } from "../../src/db/schema/index.ts";
import { enqueueDeviceJob, getJob } from "../../src/platform/jobs/queue.ts";
import { COLLECTOR_NODE_ARGS } from "../../src/runtime/collector-process.ts";
import { createTestContext, TEST_APP_KEY, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../helpers/collector.ts";
import { generateHostKey, startFakeDevice, type FakeDevice, type FakeDeviceOptions } from "../helpers/fake-device.ts";
import { start, stopGroup, type Spawned } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";

/**
 * Real collector processes (`node --import tsx collector/main.ts`) sharing one SQLite database with this test:
 * a collector killed with SIGKILL in the middle of a session loses its job to another collector once its
 * lease runs out, and the job is stored exactly once; two collectors working one queue never open two sessions
 * to one device at once and run every job exactly once.
 */

const USERNAME = "netops";
const PASSWORD = "Process-Test-Pass-3317";
const CONFIG_COMMAND = IOS_CONFIG_COMMAND;
const { prompt: PROMPT, script: iosAnswer } = iosScript("core-2", [
  "hostname core-2",
  "!",
  "interface Vlan10",
  " ip address 192.0.2.2 255.255.255.0",
  "!",
  "end",
]);
/** What the built-in cisco-ios template stores: one version per command. */
const COMMANDS = [CONFIG_COMMAND, "show version", "show vtp status", "show inventory"];

let t: TestContext;
let token: string;
let iosTemplate: number;
const collectors: Spawned[] = [];
const fakes: FakeDevice[] = [];

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  iosTemplate = await builtinTemplateId(t, "cisco-ios");
});

afterAll(async () => {
  for (const c of collectors) stopGroup(c, "SIGTERM");
  await Promise.all(collectors.map((c) => Promise.race([c.exited, new Promise((r) => setTimeout(r, 5000))])));
  for (const c of collectors) stopGroup(c, "SIGKILL");
  await Promise.all(fakes.map((f) => f.close()));
  await t.close();
});

async function fakeIos(options: Partial<FakeDeviceOptions> = {}): Promise<FakeDevice> {
  const device = await startFakeDevice({
    script: iosAnswer,
    initPrompt: `\r\n${PROMPT}`,
    configCommand: CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
    ...options,
  });
  fakes.push(device);
  return device;
}

let names = 0;
const addDevice = (port: number) =>
  addLoopbackDevice(t, token, {
    port,
    templateId: iosTemplate,
    username: USERNAME,
    password: PASSWORD,
    name: `process-device-${++names}`,
  });

/** A collector process on the test's database: a 2 s lease, so a dead collector's jobs come back quickly. */
function startCollector(concurrency: number, env: Record<string, string> = {}): Spawned {
  const collector = start(process.execPath, [...COLLECTOR_NODE_ARGS, "--import", "tsx", "collector/main.ts"], {
    STORAGE_DIR: t.dir,
    DATABASE_URL: t.config.databaseUrl,
    APP_KEY: TEST_APP_KEY,
    COLLECTOR_LEASE_SECONDS: "2",
    COLLECTOR_CONCURRENCY: String(concurrency),
    ...env,
  });
  collectors.push(collector);
  return collector;
}

type LogLine = { level: string; msg: string; [field: string]: unknown };
/** The collector's JSON log lines (one per event, on stderr). */
const logOf = (c: Spawned): LogLine[] =>
  c
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);

/**
 * until(), watching the collectors too: gives up at once with the output of one that exited, and shows all their
 * output when the tries (400 or `tries`, 50 ms apart: 20 s or more) run out.
 */
async function untilWhileRunning(
  what: string,
  condition: () => Promise<boolean> | boolean,
  watched: Spawned[],
  tries = 400,
): Promise<void> {
  const exited = () => watched.find((c) => c.child.exitCode !== null || c.child.signalCode !== null);
  let state: { met: boolean; dead: Spawned | undefined };
  try {
    state = await until(
      what,
      async () => ({ met: await condition(), dead: exited() }),
      ({ met, dead }) => met || dead !== undefined,
      { tries, everyMs: 50 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${watched.map((c) => c.output()).join("\n---\n")}`);
  }
  if (!state.met) throw new Error(`a collector exited while waiting for ${what}:\n${state.dead!.output()}`);
}

const started = (c: Spawned) => logOf(c).some((l) => l.msg === "collector started");
const readJob = async (id: number) => (await getJob(t.db, id))!;

describe("collector processes on one database", () => {
  it("a collector killed with SIGKILL mid-session: another takes the job after its lease and stores it exactly once", async () => {
    const hostKey = generateHostKey().privateKey;
    // Goes silent 20 KB into the configuration: the first collector is left waiting inside the session.
    const stalling = await fakeIos({ hostKey, faults: { hugeOutputBytes: 100_000, stallAfterBytes: 20_000 } });
    const id = await addDevice(stalling.port);
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: id, trigger: "api", priority: 50, maxAttempts: 3 },
      new Date(),
    );

    const first = startCollector(2);
    await untilWhileRunning(
      "the first collector to be inside 'show running-config'",
      () => stalling.received.some((l) => l.startsWith(CONFIG_COMMAND)),
      [first],
    );
    const claimed = await readJob(job.id);
    expect(claimed).toMatchObject({ state: "running", attempts: 1 });
    stopGroup(first, "SIGKILL");
    await first.exited;

    // The device comes back as it was (address, port, key) and answers normally from now on.
    await stalling.close();
    const healthy = await fakeIos({ hostKey, port: stalling.port });
    const second = startCollector(2);
    // The job's row is finished a moment before its collector logs the line that says so.
    const finishedLine = () => logOf(second).some((l) => l.msg === "job finished");
    await untilWhileRunning(
      "the job to finish",
      async () => (await readJob(job.id)).state === "finished" && finishedLine(),
      [second],
    );

    const done = await readJob(job.id);
    expect(done, `${done.message} ${JSON.stringify(done.result)}`).toMatchObject({
      state: "finished",
      outcome: "success",
      attempts: 2,
      leaseOwner: null,
    });
    expect(healthy.sessions).toBe(1);
    expect(healthy.unexpected).toEqual([]);
    const log = logOf(second);
    expect(log.find((l) => l.msg.startsWith("requeued jobs"))).toMatchObject({ level: "warn", jobs: 1 });
    expect(log.filter((l) => l.msg === "job finished")).toEqual([
      expect.objectContaining({ job_id: job.id, device: id, attempt: 2, outcome: "success" }),
    ]);

    // Nothing stored twice: one version per command, seen once, one change record each.
    const versions = await t.db.select().from(configs).where(eq(configs.deviceId, id));
    expect(versions.map((v) => [v.command, v.version, v.seenCount, v.jobId]).sort()).toEqual(
      COMMANDS.map((c) => [c, 1, 1, job.id]).sort(),
    );
    expect(await t.db.select().from(configChanges).where(eq(configChanges.deviceId, id))).toHaveLength(COMMANDS.length);

    stopGroup(second, "SIGTERM");
    expect(await second.exited, "a collector stops cleanly on SIGTERM").toBe(0);
  });

  it("a collector stopped (SIGTERM) with a job it cannot finish in the grace period hands it back: lease cleared, attempt not counted, exit 0", async () => {
    // Goes silent inside the configuration and never finishes: only the hand-back can end this job's run.
    const stalling = await fakeIos({ faults: { hugeOutputBytes: 100_000, stallAfterBytes: 20_000 } });
    const id = await addDevice(stalling.port);
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: id, trigger: "api", priority: 50, maxAttempts: 3 },
      new Date(),
    );
    // A long lease: a job found queued below was handed back, not requeued by an expired lease.
    const collector = startCollector(2, { SHUTDOWN_GRACE_SECONDS: "2", COLLECTOR_LEASE_SECONDS: "600" });
    await untilWhileRunning(
      "the collector to be inside 'show running-config'",
      () => stalling.received.some((l) => l.startsWith(CONFIG_COMMAND)),
      [collector],
    );
    expect(await readJob(job.id)).toMatchObject({ state: "running", attempts: 1 });

    collector.child.kill("SIGTERM");
    const code = await Promise.race([
      collector.exited,
      new Promise((r) => setTimeout(() => r("still running 10 s after SIGTERM"), 10_000)),
    ]);
    expect(code, collector.output()).toBe(0);
    expect(await readJob(job.id)).toMatchObject({
      state: "queued",
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: 0,
      outcome: null,
    });
    expect(logOf(collector).find((l) => l.msg.startsWith("handed back"))).toMatchObject({ level: "warn", jobs: 1 });
    await t.db.update(jobs).set({ state: "finished" }).where(eq(jobs.id, job.id)); // out of the next test's way
  });

  it("two collectors never open two sessions to one device at once, and run every job exactly once", async () => {
    const DEVICES = 4;
    const JOBS_PER_DEVICE = 3;
    const devices: FakeDevice[] = [];
    const ids: number[] = [];
    for (let i = 0; i < DEVICES; i++) {
      devices.push(await fakeIos({ latencyMs: 30 }));
      ids.push(await addDevice(devices[i]!.port));
    }
    // Each takes at most two devices at a time, so both have work.
    const a = startCollector(2);
    const b = startCollector(2);
    await untilWhileRunning("both collectors to start", () => started(a) && started(b), [a, b]);

    // enqueueDeviceJob hands back the device's pending job, so several jobs per device go straight into the table.
    const now = new Date();
    const queued = await t.db
      .insert(jobs)
      .values(
        ids.flatMap((deviceId) =>
          Array.from({ length: JOBS_PER_DEVICE }, () => ({
            type: "download" as const,
            deviceId,
            trigger: "schedule" as const,
            priority: 0,
            maxAttempts: 1,
            runAfter: now,
            createdAt: now,
          })),
        ),
      )
      .returning({ id: jobs.id });
    const jobIds = queued.map((j) => j.id);
    const rows = () => t.db.select().from(jobs).where(inArray(jobs.id, jobIds));
    const ranBy = (c: Spawned) =>
      logOf(c)
        .filter((l) => l.msg === "job finished")
        .map((l) => l.job_id as number);
    // A job's row is finished a moment before its collector logs the line that says so.
    await untilWhileRunning(
      "every job to finish",
      async () =>
        (await rows()).every((j) => j.state === "finished") && ranBy(a).length + ranBy(b).length >= jobIds.length,
      [a, b],
      800,
    );

    for (const j of await rows()) {
      expect(j, `${j.message}`).toMatchObject({ state: "finished", attempts: 1, leaseOwner: null });
      expect(["success", "unchanged"]).toContain(j.outcome);
    }
    expect(
      [...ranBy(a), ...ranBy(b)].sort((x, y) => x - y),
      "each job run once, by one collector",
    ).toEqual(jobIds);
    expect(ranBy(a).length, "both collectors took part").toBeGreaterThan(0);
    expect(ranBy(b).length, "both collectors took part").toBeGreaterThan(0);
    for (const device of devices) {
      expect(device.sessions).toBe(JOBS_PER_DEVICE);
      expect(device.maxConcurrentSessions, "sessions to one device at once").toBe(1);
      expect(device.unexpected).toEqual([]);
    }
    // Every download stored or counted once: one version per command, seen by each job.
    const versions = await t.db.select().from(configs).where(inArray(configs.deviceId, ids));
    expect(versions).toHaveLength(DEVICES * COMMANDS.length);
    expect(versions.every((v) => v.version === 1 && v.seenCount === JOBS_PER_DEVICE)).toBe(true);
    for (const c of [a, b])
      expect(
        logOf(c).filter((l) => l.level !== "info"),
        c.output(),
      ).toEqual([]);
  });
});
