import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { enqueueDeviceJob, getJob, type Job } from "../src/jobs/queue.ts";
import { createLogger, silentLogger } from "../src/logger.ts";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../test/helpers/collector.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "./worker.ts";

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(() => t.close());

/** Polls the job until it is no longer running, up to a generous bound; the lease it would otherwise wait for is an hour. */
async function settled(id: number): Promise<Job> {
  const deadline = Date.now() + 15_000;
  let job = (await getJob(t.db, id))!;
  while ((job.state !== "finished" || job.leaseOwner) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await getJob(t.db, id))!;
  }
  return job;
}

describe("the worker", () => {
  it("ends a job whose end could not be recorded with that error at once, instead of leaving it running until its lease runs out", async () => {
    // Nothing listens on port 1: the session fails at once, and recording that failure also sets the device's status.
    const deviceId = await addLoopbackDevice(t, await t.token(), { port: 1, templateId: await builtinTemplateId(t, "cisco-ios") });
    // The fault: the transaction that records the failure cannot write the device (as a full disk or a damaged page would).
    await t.db.run(sql`create trigger refuse_device_status before update of status on devices begin select raise(abort, 'the device row cannot be written'); end`);
    const { job } = await enqueueDeviceJob(t.db, { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 }, new Date());

    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock: { now: () => new Date() }, logger: silentLogger, owner: "collector-a", connectTimeoutMs: 2_000 },
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

  it("puts the job's id on every line the job logs", async () => {
    const lines: Record<string, unknown>[] = [];
    const deviceId = await addLoopbackDevice(t, await t.token(), { port: 1, templateId: await builtinTemplateId(t, "cisco-ios") });
    const { job } = await enqueueDeviceJob(t.db, { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 }, new Date());
    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock: { now: () => new Date() }, logger: createLogger((l) => lines.push(JSON.parse(l))), owner: "collector-a", connectTimeoutMs: 2_000 },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 50 },
    );
    try {
      expect((await settled(job.id)).outcome).toBe("unreachable");
    } finally {
      await worker.stop();
    }
    expect(lines).toContainEqual(expect.objectContaining({ msg: "job finished", job_id: job.id, device: deviceId, outcome: "unreachable" }));
    // The worker's loop logs nothing about this job without it: every line naming the device names the job too.
    for (const line of lines.filter((l) => l.device === deviceId)) expect(line.job_id).toBe(job.id);
  });
});
