import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { jobs } from "../src/db/schema/index.ts";
import { claimNextJob, enqueueDeviceJob, getJob, requeueExpiredLeases, type Job } from "../src/platform/jobs/queue.ts";
import { createLogger, silentLogger } from "../src/kernel/logger.ts";
import { until } from "../test/helpers/until.ts";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../test/helpers/fake-device.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "./worker.ts";
import { storeDownload, type StoreRequest } from "./store-download.ts";

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(() => t.close());

/** Polls the job until it is no longer running, up to a generous bound; the lease it would otherwise wait for is an hour. */
const settled = (id: number): Promise<Job> =>
  until(
    `job ${id} to settle`,
    async () => (await getJob(t.db, id))!,
    (job) => job.state === "finished" && !job.leaseOwner,
    { tries: 300, everyMs: 50 },
  );

describe("the worker", () => {
  it("ends a job whose end could not be recorded with that error at once, instead of leaving it running until its lease runs out", async () => {
    // Nothing listens on port 1: the session fails at once, and recording that failure also sets the device's status.
    const deviceId = await addLoopbackDevice(t, await t.token(), {
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    // The fault: the transaction that records the failure cannot write the device (as a full disk or a damaged page would).
    await t.db.run(
      sql`create trigger refuse_device_status before update of status on devices begin select raise(abort, 'the device row cannot be written'); end`,
    );
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
      new Date(),
    );

    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-a",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs: 60 * 60_000 },
    );
    try {
      const ended = await settled(job.id);
      expect(ended).toMatchObject({ state: "finished", outcome: "error", leaseOwner: null });
      expect(ended.message).toMatch(/^the job's end could not be recorded: .*the device row cannot be written/);
    } finally {
      await worker.stop();
    }
  });

  it("ends a job its dispatch table says this collector cannot run with an error naming the kind", async () => {
    const now = new Date();
    // No event consumers given to this collector, and a download with no device: neither can run here.
    const queued = await t.db
      .insert(jobs)
      .values(
        (["event", "download"] as const).map((type) => ({
          type,
          trigger: "api" as const,
          priority: 0,
          maxAttempts: 1,
          runAfter: now,
          createdAt: now,
        })),
      )
      .returning({ id: jobs.id });
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-a",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 2, pollIntervalMs: 50 },
    );
    try {
      expect(await settled(queued[0]!.id)).toMatchObject({
        state: "finished",
        outcome: "error",
        message: "this collector cannot run event jobs",
      });
      expect(await settled(queued[1]!.id)).toMatchObject({
        state: "finished",
        outcome: "error",
        message: "this collector cannot run download jobs",
      });
    } finally {
      await worker.stop();
    }
  });

  it("ends a job whose collector stopped on its last two attempts instead of running it again, and runs one stopped less often", async () => {
    const deviceId = await addLoopbackDevice(t, await t.token(), {
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    const other = await addLoopbackDevice(t, await t.token(), {
      name: "other",
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    const start = new Date(Date.now() - 3_600_000);
    const { job: poison } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 2 },
      start,
    );
    const { job: unlucky } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: other, trigger: "api", priority: 50, maxAttempts: 2 },
      start,
    );
    // Collectors take both jobs and die, twice; a third one takes only the first and dies too.
    const at = (minutes: number) => new Date(start.getTime() + minutes * 60_000);
    for (const [claims, minute] of [
      [2, 0],
      [2, 10],
      [1, 20],
    ] as const) {
      for (let i = 0; i < claims; i++)
        expect(await claimNextJob(t.db, `dead-${minute}`, at(minute), 60_000)).toBeDefined();
      expect(await requeueExpiredLeases(t.db, at(minute + 5))).toBe(claims);
    }
    expect((await getJob(t.db, poison.id))!.attempts).toBe(3);
    expect((await getJob(t.db, unlucky.id))!.attempts).toBe(2);

    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-d",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 2, pollIntervalMs: 50 },
    );
    try {
      const ended = await settled(poison.id);
      expect(ended).toMatchObject({ state: "finished", outcome: "error", attempts: 4 });
      expect(ended.message).toMatch(
        /^not tried again: its collector stopped while running it on its last two attempts/,
      );
      // The other was run (nothing listens on port 1: its session ended unreachable), a stop forgiven past its attempts.
      expect(await settled(unlucky.id)).toMatchObject({ outcome: "unreachable", attempts: 3 });
    } finally {
      await worker.stop();
    }
  });

  it("puts the job's id on every line the job logs", async () => {
    const lines: Record<string, unknown>[] = [];
    const deviceId = await addLoopbackDevice(t, await t.token(), {
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
      new Date(),
    );
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: createLogger((l) => lines.push(JSON.parse(l))),
        owner: "collector-a",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50 },
    );
    try {
      expect((await settled(job.id)).outcome).toBe("unreachable");
    } finally {
      await worker.stop();
    }
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "job finished", job_id: job.id, device: deviceId, outcome: "unreachable" }),
    );
    // The worker's loop logs nothing about this job without it: every line naming the device names the job too.
    for (const line of lines.filter((l) => l.device === deviceId)) expect(line.job_id).toBe(job.id);
  });

  it("starts the next session once a download is handed over to be stored, without waiting for the store", async () => {
    const token = await t.token();
    const templateId = await builtinTemplateId(t, "cisco-ios");
    const fakes: FakeDevice[] = [];
    const jobIds: number[] = [];
    for (const name of ["edge-1", "edge-2"]) {
      const { prompt, script } = iosScript(name, [`hostname ${name}`, "end"]);
      const fake = await startFakeDevice({
        script,
        initPrompt: prompt,
        configCommand: IOS_CONFIG_COMMAND,
        auth: { username: "netops", password: "Pass-1234" },
      });
      fakes.push(fake);
      const deviceId = await addLoopbackDevice(t, token, {
        port: fake.port,
        templateId,
        username: "netops",
        password: "Pass-1234",
        name,
      });
      jobIds.push(
        (
          await enqueueDeviceJob(
            t.db,
            { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
            new Date(),
          )
        ).job.id,
      );
    }
    // The first download's store is held until the second one's arrives (or a generous bound passes).
    const handedOver: number[] = [];
    let secondArrived!: (how: string) => void;
    const second = new Promise<string>((resolve) => (secondArrived = resolve));
    let firstReleased: string | undefined;
    const store = async (request: StoreRequest) => {
      handedOver.push(request.job.id);
      if (handedOver.length === 1)
        firstReleased = await Promise.race([
          second,
          new Promise<string>((r) => setTimeout(() => r("not before 5 s"), 5_000)),
        ]);
      else secondArrived("the second download arrived");
      return storeDownload(t.db, request);
    };
    // One session at a time.
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-a",
        connectTimeoutMs: 2_000,
        store,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50 },
    );
    try {
      const [first, later] = [await settled(jobIds[0]!), await settled(jobIds[1]!)];
      expect([first.outcome, later.outcome]).toEqual(["success", "success"]);
      // The second download reached storing while the first was still being stored.
      expect(firstReleased).toBe("the second download arrived");
      expect(handedOver).toEqual(jobIds);
    } finally {
      await worker.stop();
      for (const fake of fakes) await fake.close();
    }
  });

  it("says jobs wait in the queue until a claim finds none (the search indexer holds back meanwhile)", async () => {
    const token = await t.token();
    const templateId = await builtinTemplateId(t, "cisco-ios");
    const fakes: FakeDevice[] = [];
    const jobIds: number[] = [];
    for (const name of ["edge-3", "edge-4"]) {
      const { prompt, script } = iosScript(name, [`hostname ${name}`, "end"]);
      const fake = await startFakeDevice({
        script,
        initPrompt: prompt,
        configCommand: IOS_CONFIG_COMMAND,
        auth: { username: "netops", password: "Pass-1234" },
      });
      fakes.push(fake);
      const deviceId = await addLoopbackDevice(t, token, {
        port: fake.port,
        templateId,
        username: "netops",
        password: "Pass-1234",
        name,
      });
      jobIds.push(
        (
          await enqueueDeviceJob(
            t.db,
            { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
            new Date(),
          )
        ).job.id,
      );
    }
    const waitingAtStore: boolean[] = [];
    const store = async (request: StoreRequest) => {
      waitingAtStore.push(worker.waiting);
      return storeDownload(t.db, request);
    };
    // One session at a time: while the first download is stored, the second job has been claimed or still waits.
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-a",
        connectTimeoutMs: 2_000,
        store,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50 },
    );
    try {
      expect((await settled(jobIds[0]!)).outcome).toBe("success");
      expect((await settled(jobIds[1]!)).outcome).toBe("success");
      expect(waitingAtStore[0]).toBe(true);
      await until(
        "the worker to stop waiting",
        () => worker.waiting,
        (waiting) => !waiting,
        { tries: 250, everyMs: 20 },
      );
    } finally {
      await worker.stop();
      for (const fake of fakes) await fake.close();
    }
  });

  it("puts back and runs a job whose collector stopped renewing its lease, by its own sweep on its clock", async () => {
    const deviceId = await addLoopbackDevice(t, await t.token(), {
      name: "orphaned",
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    const now = Date.now();
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
      new Date(now),
    );
    // A collector claimed it with a 60 s lease and died.
    expect((await claimNextJob(t.db, "dead-collector", new Date(now), 60_000))?.id).toBe(job.id);
    // This worker's clock is one second past that lease: nothing but its sweep can free the job.
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date(Date.now() + 61_000) },
        logger: silentLogger,
        owner: "collector-s",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs: 60_000 },
    );
    try {
      // Run again (nothing listens on port 1: unreachable), on a second attempt.
      expect(await settled(job.id)).toMatchObject({
        state: "finished",
        outcome: "unreachable",
        attempts: 2,
        leaseOwner: null,
      });
    } finally {
      await worker.stop();
    }
  });

  it("takes over a snippet push whose collector died during its download before, within one lease, and ends it as interrupted", async () => {
    const token = await t.token();
    // The device logs in, then answers nothing: the download before the push never ends on its own.
    const { prompt, script } = iosScript("stuck-1", ["hostname stuck-1", "end"]);
    const fake = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: "netops", password: "Pass-1234" },
      faults: { stallAfterBytes: 0 },
    });
    const deviceId = await addLoopbackDevice(t, token, {
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "netops",
      password: "Pass-1234",
      name: "stuck-1",
    });
    const snip = await t.call("/api/v1/snippets", {
      method: "POST",
      token,
      body: { name: "lease snippet", content: "ntp server 192.0.2.1" },
    });
    const sent = await t.call(`/api/v1/snippets/${snip.body.data.id}/send`, {
      method: "POST",
      token,
      body: { device_id: deviceId },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const pushJobId: number = sent.body.data.id;
    const deploymentId: number = sent.body.data.deployment_id;

    // Collector A's clock stands still from here: to the others, it died now.
    const diedAt = Date.now();
    const leaseMs = 60_000;
    const a = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date(diedAt) },
        logger: silentLogger,
        owner: "collector-a",
        connectTimeoutMs: 5_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs, jobTimeLimitMs: 10 * 60_000 },
    );
    let b: ReturnType<typeof startWorker> | undefined;
    try {
      const before = await until(
        "the download before the push to start",
        async () =>
          (
            await t.db.all<Job>(
              sql`select id, lease_expires_at as leaseExpiresAt from jobs where device_id = ${deviceId} and type = 'download' and state = 'running'`,
            )
          )[0],
        Boolean,
        { tries: 300, everyMs: 50 },
      );
      // Its lease is the collector's lease, not the push's whole time limit.
      expect(Number(before!.leaseExpiresAt)).toBeLessThanOrEqual(diedAt + leaseMs);

      // Another collector, one lease and a second later, takes the push over and ends it.
      b = startWorker(
        {
          db: t.db,
          secrets: t.secrets,
          clock: { now: () => new Date(diedAt + leaseMs + 1_000) },
          logger: silentLogger,
          owner: "collector-b",
          connectTimeoutMs: 5_000,
        },
        { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs },
      );
      const push = await settled(pushJobId);
      expect(push).toMatchObject({ state: "finished", outcome: "error", leaseOwner: null });
      expect(push.message).toMatch(/an earlier attempt of this push was interrupted/);
      const deployment = await t.call(`/api/v1/snippet-deployments/${deploymentId}`, { token });
      expect(deployment.body.data.status).not.toBe("running");
    } finally {
      await b?.stop(Date.now());
      await a.stop(Date.now());
      await fake.close();
    }
  });
});
