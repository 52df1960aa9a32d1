import { createServer, type Server, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getJob, type Job } from "../src/platform/jobs/queue.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../test/helpers/fake-device.ts";
import { freePort } from "../test/helpers/process.ts";
import { until } from "../test/helpers/until.ts";
import { SETTINGS_TTL_MS } from "./collector-settings.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "./worker.ts";

/**
 * The settings' collector section as a collector applies it: timeouts read at most every SETTINGS_TTL_MS by
 * each worker (no restart), and retries as the attempts a device job gets when it is queued.
 */

let t: TestContext;
let token: string;
let clock: ReturnType<typeof manualClock>;
let worker: ReturnType<typeof startWorker> | undefined;
const closers: (() => unknown)[] = [];
beforeEach(async () => {
  // The API queues with the collector's clock: a job's run_after and its retries' backoff are on one time line.
  clock = manualClock(new Date());
  t = await createTestContext({ clock });
  token = await t.token();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  await Promise.all(closers.splice(0).map((close) => close()));
  await t.close();
});

const patchCollector = async (collector: Record<string, number>) =>
  expect((await t.call("/api/v1/settings", { method: "PATCH", token, body: { collector } })).status).toBe(200);

/** A collector's worker with no timeouts of its own, so the settings decide them. */
const startCollector = () => {
  worker = startWorker(
    { db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "settings-collector" },
    { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 20, leaseMs: 60 * 60_000 },
  );
};

const downloadNow = async (deviceId: number) => {
  const res = await t.call(`/api/v1/download-now/${deviceId}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: number; max_attempts: number };
};

/**
 * Waits until the job, out of anyone's hands, satisfies `done`: 500 tries 20 ms apart, 10 s or more, and still far
 * below the 20-30 s defaults a fix replaces.
 */
const untilJob = (id: number, done: (job: Job) => boolean, what: string): Promise<Job> =>
  until(
    what,
    async () => (await getJob(t.db, id))!,
    (job) => done(job) && !job.leaseOwner,
    { tries: 500, everyMs: 20 },
  );
const finished = (id: number) => untilJob(id, (j) => j.state === "finished", `job ${id} to finish`);

/** A port that accepts TCP and never says a word: an SSH client waits there for the server's banner. */
async function silentPort(): Promise<number> {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => void sockets.push(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => {
    sockets.forEach((s) => s.destroy());
    server.close();
  });
  return (server.address() as { port: number }).port;
}

describe("collector settings", () => {
  it("the connect timeout applies to the next download, and a change within 10 s without a restart", async () => {
    await patchCollector({ connect_timeout_seconds: 1, retries: 0 });
    const deviceId = await addLoopbackDevice(t, token, {
      port: await silentPort(),
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    startCollector();

    const first = await finished((await downloadNow(deviceId)).id);
    expect(first).toMatchObject({ outcome: "timeout", message: "no SSH handshake within 1 s" });

    await patchCollector({ connect_timeout_seconds: 2 });
    // Read less than SETTINGS_TTL_MS ago: this collector still holds 1 s.
    clock.advance(SETTINGS_TTL_MS - 1);
    expect(await finished((await downloadNow(deviceId)).id)).toMatchObject({ message: "no SSH handshake within 1 s" });
    clock.advance(1);
    const third = await finished((await downloadNow(deviceId)).id);
    expect(third).toMatchObject({ outcome: "timeout", message: "no SSH handshake within 2 s" });
    expect(third.result!.duration_ms).toBeGreaterThanOrEqual(2000);
  });

  it("the command timeout is how long a session waits in silence for the device's prompt", async () => {
    await patchCollector({ command_timeout_seconds: 1, retries: 0 });
    const { prompt, script } = iosScript("quiet-1", ["hostname quiet-1", "end"]);
    const fake: FakeDevice = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: "netops", password: "Quiet-Pass-5521" },
      faults: { neverPrompt: true },
    });
    closers.push(() => fake.close());
    const deviceId = await addLoopbackDevice(t, token, {
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "netops",
      password: "Quiet-Pass-5521",
    });
    startCollector();

    const job = await finished((await downloadNow(deviceId)).id);
    expect(job.outcome, JSON.stringify(job)).toBe("prompt_not_found");
    expect(job.result!.duration_ms).toBeGreaterThanOrEqual(1000);
  });

  it("retries: a job that cannot connect is tried 1 + retries times, as many as the settings said when it was queued", async () => {
    const deviceId = await addLoopbackDevice(t, token, {
      port: await freePort(),
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    await patchCollector({ retries: 0 });
    const single = await downloadNow(deviceId);
    expect(single.max_attempts).toBe(1);
    startCollector();
    expect(await finished(single.id)).toMatchObject({ outcome: "unreachable", attempts: 1 });

    await patchCollector({ retries: 2 });
    const queued = await downloadNow(deviceId);
    expect(queued.max_attempts).toBe(3);
    await untilJob(queued.id, (j) => j.attempts === 1 && j.state === "queued", "the first attempt");
    clock.advance(30_000);
    await untilJob(queued.id, (j) => j.attempts === 2 && j.state === "queued", "the second attempt");
    clock.advance(120_000);
    const done = await finished(queued.id);
    expect(done).toMatchObject({ outcome: "unreachable", attempts: 3, maxAttempts: 3 });
  });
});
