import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { jobs } from "../../db/schema/index.ts";
import { getJob } from "../../platform/jobs/queue.ts";
import { newKeyPair } from "../../platform/secrets/sealed-box.ts";
import type { Logger } from "../../kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../../../test/helpers/collector.ts";
import { COLLECTOR_CREDENTIAL_HEADER } from "./wire.ts";

/** The claim a remote collector makes, spoken by hand, against the same queue rules as a local collector's. */
let t: TestContext;
let clock: ReturnType<typeof manualClock>;
const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = { debug() {}, info() {}, warn: (msg, fields) => warnings.push({ msg, fields }), error() {} };
beforeEach(async () => {
  warnings.length = 0;
  clock = manualClock();
  t = await createTestContext({ clock, logger });
});
afterEach(() => t.close());

async function post(path: string, body: unknown, credential?: string) {
  const res = await t.app.fetch(
    new Request(`http://localhost/collector-api/v1${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(credential ? { [COLLECTOR_CREDENTIAL_HEADER]: credential } : {}),
      },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as { data?: any; message?: string } };
}

/** A remote zone with one device and one enrolled collector's credential. */
async function remoteSite(admin: string) {
  const zone = (await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "site", mode: "remote" } }))
    .body.data;
  const deviceId = await addLoopbackDevice(t, admin, {
    port: 1,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    zone_id: zone.id,
  });
  const enroll = async (name: string) => {
    const enrolled = await post("/enroll", {
      enrollment_key: zone.enrollment_key,
      name,
      public_key: newKeyPair().publicKey,
    });
    expect(enrolled.status).toBe(201);
    return enrolled.body.data.credential as string;
  };
  return { deviceId, credential: await enroll("site-1"), enroll };
}

const claim = async (credential: string) =>
  (await post("/jobs/claim", { wait_ms: 0, max: 5 }, credential)).body.data as { id: number; max_attempts: number }[];

describe("a remote collector's claim", () => {
  it("ends a job whose remote collectors stopped on its last two attempts, as a local collector does, and its task run fails", async () => {
    const admin = await t.token();
    const { deviceId, credential } = await remoteSite(admin);
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: { task_name: "site backup", task_cron: "0 3 * * *", task_type: "download_devices", devices: [deviceId] },
    });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status).toBe(202);

    // The site's collector takes the job and dies, each time: its lease runs out and its next claim puts the job
    // back (no collector runs beside the server in these tests).
    let handedOut = 0;
    let jobId = 0;
    let maxAttempts = 0;
    for (;;) {
      const claimed = await claim(credential);
      if (!claimed.length) break;
      expect(claimed).toHaveLength(1);
      jobId = claimed[0]!.id;
      maxAttempts = claimed[0]!.max_attempts;
      handedOut++;
      expect(handedOut).toBeLessThan(10);
      clock.advance(t.config.collectorLeaseMs + 1);
    }
    // One stop past its attempts is forgiven; the claim after the second ends it.
    expect(handedOut).toBe(maxAttempts + 1);
    const job = (await getJob(t.db, jobId))!;
    expect(job).toMatchObject({ state: "finished", outcome: "error", attempts: maxAttempts + 2 });
    expect(job.message).toMatch(/^not tried again: its collector stopped while running it on its last two attempts/);
    expect(await claim(credential)).toEqual([]);
    const settled = await t.call(`/api/v1/task-runs/${run.body.data.id}`, { token: admin });
    expect(settled.body.data.status).toBe("failed");
    expect(warnings).toContainEqual({
      msg: "job not run: its collector stopped while running it on its last two attempts",
      fields: expect.objectContaining({ type: "download", device: deviceId, attempts: maxAttempts + 1 }),
    });
  });

  it("hands a job whose collector died to another collector of its zone once the lease ran out, with no local collector", async () => {
    const admin = await t.token();
    const { deviceId, credential: dying, enroll } = await remoteSite(admin);
    const second = await enroll("site-2");
    const queued = await t.call(`/api/v1/download-now/${deviceId}`, { token: admin });
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300);
    const jobId = queued.body.data.id as number;

    const [taken] = await claim(dying);
    expect(taken!.id).toBe(jobId);
    // While the lease holds, the job stays the first collector's.
    clock.advance(t.config.collectorLeaseMs - 1);
    expect(await claim(second)).toEqual([]);
    expect(await getJob(t.db, jobId)).toMatchObject({ state: "running", attempts: 1 });

    clock.advance(2);
    const [retaken] = await claim(second);
    expect(retaken).toMatchObject({ id: jobId, attempts: 2 });
    expect((await getJob(t.db, jobId))!.leaseOwner).toMatch(/^remote:\d+:site-2$/);
    expect(warnings).toContainEqual({
      msg: "requeued jobs whose collector stopped renewing their lease",
      fields: expect.objectContaining({ jobs: 1 }),
    });
    // The first collector, back, has lost the job.
    expect((await post(`/jobs/${jobId}/lease`, {}, dying)).status).toBe(409);
  });

  it("does not hand out a job that was cancelled, and takes a held job's lease back once it is", async () => {
    const admin = await t.token();
    const { deviceId, credential } = await remoteSite(admin);
    const queued = await t.call(`/api/v1/download-now/${deviceId}`, { token: admin });
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300);
    // No API ends a queued job yet: the job is ended as a cancellation would end it.
    const cancel = (id: number) =>
      t.db
        .update(jobs)
        .set({
          state: "finished",
          outcome: "cancelled",
          leaseOwner: null,
          leaseExpiresAt: null,
          finishedAt: clock.now(),
        })
        .where(eq(jobs.id, id));
    await cancel(queued.body.data.id);
    expect(await claim(credential)).toEqual([]);

    const again = await t.call(`/api/v1/download-now/${deviceId}`, { token: admin });
    const [held] = await claim(credential);
    expect(held!.id).toBe(again.body.data.id);
    expect((await post(`/jobs/${held!.id}/lease`, {}, credential)).status).toBe(200);
    await cancel(held!.id);
    expect((await post(`/jobs/${held!.id}/lease`, {}, credential)).status).toBe(409);
  });
});
