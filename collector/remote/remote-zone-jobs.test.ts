import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { enqueueDeviceJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { until } from "../../test/helpers/until.ts";
import { createTestContext, type TestContext } from "../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../../test/helpers/collector.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../worker.ts";

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(() => t.close());

/** Polls the job until it is no longer running or queued, up to a generous bound. */
const settled = (id: number): Promise<Job> =>
  until(
    `job ${id} to settle`,
    async () => (await getJob(t.db, id))!,
    (job) => job.state === "finished" && !job.leaseOwner,
    { tries: 300, everyMs: 50 },
  );

describe("jobs of a remote zone's devices", () => {
  it("are left to the zone's site collectors: the collector beside the database runs none of its device sessions", async () => {
    const token = await t.token();
    const zone = await t.call("/api/v1/zones", { method: "POST", token, body: { name: "branch-ot", mode: "remote" } });
    expect(zone.status).toBe(201);
    // Port 1: a session the collector tried to open would end the job as unreachable.
    const deviceId = await addLoopbackDevice(t, token, {
      port: 1,
      templateId: await builtinTemplateId(t, "cisco-ios"),
    });
    const moved = await t.call(`/api/v1/devices/${deviceId}`, {
      method: "PATCH",
      token,
      body: { zone_id: zone.body.data.id },
    });
    expect(moved.status).toBe(200);
    const localId = await addLoopbackDevice(t, token, { port: 1, templateId: await builtinTemplateId(t, "cisco-ios") });
    const now = new Date();
    const { job: detect } = await enqueueDeviceJob(
      t.db,
      { type: "detect", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
      now,
    );
    const { job: download } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "api", priority: 60, maxAttempts: 3 },
      now,
    );

    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-local",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs: 60 * 60_000 },
    );
    try {
      // A local device's job, queued after the zone's and below them: the worker ran it, so it saw and left them.
      const { job: later } = await enqueueDeviceJob(
        t.db,
        { type: "download", deviceId: localId, trigger: "api", priority: 10, maxAttempts: 1 },
        new Date(),
      );
      await settled(later.id);
      for (const job of [detect, download])
        expect((await getJob(t.db, job.id))!).toMatchObject({ state: "queued", attempts: 0 });
    } finally {
      await worker.stop();
    }
    // Back in the local zone, the detection waiting for a site collector runs here (and fails as the unreachable
    // device it is).
    await t.call(`/api/v1/devices/${deviceId}`, { method: "PATCH", token, body: { zone_id: 1 } });
    const second = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "collector-local",
        connectTimeoutMs: 2_000,
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50, leaseMs: 60 * 60_000 },
    );
    try {
      const ended = await settled(detect.id);
      expect(ended).toMatchObject({ state: "finished", outcome: "unreachable" });
    } finally {
      await second.stop();
    }
  });
});
