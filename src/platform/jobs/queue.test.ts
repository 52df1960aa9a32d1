import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { openDatabase, type Database } from "../../db/client.ts";
import { devices, jobs } from "../../db/schema/index.ts";
import {
  claimNextJob,
  completeJob,
  enqueueDeviceJob,
  extendLease,
  getJob,
  MAX_CHANGE_DEFER_MS,
  queueChangeBackup,
  requeueExpiredLeases,
  retryDelayMs,
} from "./queue.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
const now = new Date("2026-06-01T12:00:00Z");
const later = (ms: number) => new Date(now.getTime() + ms);

async function makeDevices(n: number): Promise<number[]> {
  const rows = await t.db
    .insert(devices)
    .values(
      Array.from({ length: n }, (_, i) => ({
        name: `queue-dev-${t.dir.slice(-6)}-${Date.now()}-${i}`,
        ip: `10.9.${Math.floor(i / 250)}.${i % 250}`,
        createdAt: now,
        updatedAt: now,
      })).map((d) => ({ ...d, nameKey: nameKey(d.name) })),
    )
    .returning({ id: devices.id });
  return rows.map((r) => r.id);
}

const rawJob = (deviceId: number, priority = 0) =>
  t.db
    .insert(jobs)
    .values({ type: "download", deviceId, trigger: "schedule", priority, runAfter: now, createdAt: now })
    .returning()
    .then((r) => r[0]!);

beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("job queue", () => {
  it("claims the most urgent job first, then the oldest", async () => {
    const [a, b, c] = await makeDevices(3);
    const low = await rawJob(a!, 0);
    const high = await rawJob(b!, 100);
    const lowLater = await rawJob(c!, 0);
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await claimNextJob(t.db, "c1", now, 60_000))!.id);
    expect(order).toEqual([high.id, low.id, lowLater.id]);
    expect(await claimNextJob(t.db, "c1", now, 60_000)).toBeUndefined();
  });

  it("hands back the claimed job running, leased to its claimer, counted and started", async () => {
    const [d, e] = await makeDevices(2);
    await rawJob(d!);
    await rawJob(e!);
    const first = (await claimNextJob(t.db, "c1", now, 60_000))!;
    expect(first).toMatchObject({
      state: "running",
      leaseOwner: "c1",
      attempts: 1,
      leaseExpiresAt: new Date(now.getTime() + 60_000),
      startedAt: now,
    });
    // Each claim uses its own owner and times, though the statement is built once.
    const second = (await claimNextJob(t.db, "c2", later(5_000), 10_000))!;
    expect(second).toMatchObject({
      leaseOwner: "c2",
      leaseExpiresAt: new Date(now.getTime() + 15_000),
      startedAt: later(5_000),
    });
    expect(await getJob(t.db, second.id)).toEqual(second);
    await completeJob(t.db, first, "c1", { outcome: "success" }, now);
    await completeJob(t.db, second, "c2", { outcome: "success" }, now);
  });

  it("never runs two jobs for one device at once", async () => {
    const [d] = await makeDevices(1);
    await rawJob(d!);
    await rawJob(d!);
    const first = await claimNextJob(t.db, "c1", now, 60_000);
    expect(first?.deviceId).toBe(d);
    expect(await claimNextJob(t.db, "c2", now, 60_000)).toBeUndefined();
    await completeJob(t.db, first!, "c1", { outcome: "success" }, now);
    expect((await claimNextJob(t.db, "c2", now, 60_000))?.deviceId).toBe(d);
  });

  it("two collectors on separate connections racing for jobs never take the same one", async () => {
    const ids = await makeDevices(120);
    for (const id of ids) await rawJob(id);
    const second: Database = await openDatabase(t.config.databaseUrl);
    try {
      const drain = async (db: Database["db"], owner: string) => {
        const got: number[] = [];
        for (;;) {
          const job = await claimNextJob(db, owner, now, 60_000);
          if (!job) return got;
          got.push(job.id);
          await new Promise((r) => setImmediate(r));
        }
      };
      const [x, y] = await Promise.all([drain(t.db, "collector-a"), drain(second.db, "collector-b")]);
      expect(x.length + y.length).toBe(120);
      expect(new Set([...x, ...y]).size).toBe(120);
      expect(x.length).toBeGreaterThan(0);
      expect(y.length).toBeGreaterThan(0);
    } finally {
      second.client.close();
    }
  });

  it("puts a job whose lease ran out back in the queue, and the old owner can no longer renew or finish it", async () => {
    const [d] = await makeDevices(1);
    await rawJob(d!);
    const job = (await claimNextJob(t.db, "dead", now, 10_000))!;
    expect(await extendLease(t.db, job.id, "dead", later(5_000), 10_000)).toBe(true);
    expect(await requeueExpiredLeases(t.db, later(14_000))).toBe(0);
    expect(await requeueExpiredLeases(t.db, later(16_000))).toBe(1);
    expect(await extendLease(t.db, job.id, "dead", later(16_000), 10_000)).toBe(false);
    const again = (await claimNextJob(t.db, "alive", later(16_000), 10_000))!;
    expect(again.id).toBe(job.id);
    expect(again.attempts).toBe(2);
    expect(await completeJob(t.db, job, "dead", { outcome: "success" }, later(17_000))).toEqual({
      recorded: false,
      retrying: false,
      inRun: false,
    });
    expect(await completeJob(t.db, again, "alive", { outcome: "success" }, later(17_000))).toEqual({
      recorded: true,
      retrying: false,
      inRun: false,
    });
    expect((await getJob(t.db, job.id))?.state).toBe("finished");
  });

  it("retries timeouts and unreachable devices with backoff, but never auth failures", async () => {
    const [d1, d2] = await makeDevices(2);
    const j1 = await rawJob(d1!);
    await rawJob(d2!);
    const c1 = (await claimNextJob(t.db, "c", now, 60_000))!;
    expect(c1.id).toBe(j1.id);
    expect(await completeJob(t.db, c1, "c", { outcome: "timeout", message: "no answer in 30 s" }, now)).toEqual({
      recorded: true,
      retrying: true,
      inRun: false,
    });
    const queued = (await getJob(t.db, c1.id))!;
    expect(queued).toMatchObject({ state: "queued", outcome: "timeout" });
    expect(queued.runAfter.getTime()).toBe(now.getTime() + retryDelayMs(1));

    const c2 = (await claimNextJob(t.db, "c", now, 60_000))!;
    expect(c2.deviceId).toBe(d2);
    expect(await completeJob(t.db, c2, "c", { outcome: "auth_failed" }, now)).toEqual({
      recorded: true,
      retrying: false,
      inRun: false,
    });
    expect((await getJob(t.db, c2.id))?.state).toBe("finished");

    // not before its backoff, then until attempts run out
    expect(await claimNextJob(t.db, "c", later(1_000), 60_000)).toBeUndefined();
    let job = (await claimNextJob(t.db, "c", later(retryDelayMs(1)), 60_000))!;
    expect(job.attempts).toBe(2);
    await completeJob(t.db, job, "c", { outcome: "unreachable" }, later(retryDelayMs(1)));
    job = (await claimNextJob(t.db, "c", later(retryDelayMs(1) + retryDelayMs(2)), 60_000))!;
    expect(job.attempts).toBe(3);
    expect(await completeJob(t.db, job, "c", { outcome: "unreachable" }, now)).toEqual({
      recorded: true,
      retrying: false,
      inRun: false,
    });
    expect(await getJob(t.db, job.id)).toMatchObject({ state: "finished", outcome: "unreachable" });
  });

  it("enqueuing again for a device returns the pending job and raises its priority", async () => {
    const [d] = await makeDevices(1);
    const first = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: d!, trigger: "schedule", priority: 0, maxAttempts: 2 },
      now,
    );
    const second = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: d!, trigger: "download_now", priority: 100, maxAttempts: 2 },
      now,
    );
    expect(first.created).toBe(true);
    expect(second).toMatchObject({ created: false, job: { id: first.job.id, priority: 100 } });
    const [row] = await t.db.select().from(jobs).where(eq(jobs.id, first.job.id));
    expect(row!.priority).toBe(100);
  });
});

describe("queueChangeBackup (a device's syslog message said its configuration changed)", () => {
  it("puts the download off after each message, at most MAX_CHANGE_DEFER_MS after the first, keeping parts a later message lacks", async () => {
    const [d] = await makeDevices(1);
    const first = await queueChangeBackup(
      t.db,
      { deviceId: d!, change: { user: "admin", source: "10.0.0.5", line: "vty0" }, debounceMs: 30_000, maxAttempts: 2 },
      now,
    );
    expect(first.created).toBe(true);
    const second = await queueChangeBackup(
      t.db,
      { deviceId: d!, change: {}, debounceMs: 30_000, maxAttempts: 2 },
      later(20_000),
    );
    expect(second).toEqual({ jobId: first.jobId, created: false });
    let job = (await getJob(t.db, first.jobId))!;
    expect(job.runAfter).toEqual(later(50_000));
    expect(job.params).toMatchObject({ changed_by: "changed by admin from 10.0.0.5 via vty0" });
    await queueChangeBackup(
      t.db,
      { deviceId: d!, change: { user: "ops" }, debounceMs: 30_000, maxAttempts: 2 },
      later(MAX_CHANGE_DEFER_MS + 60_000),
    );
    job = (await getJob(t.db, first.jobId))!;
    expect(job.runAfter).toEqual(later(MAX_CHANGE_DEFER_MS));
    expect(job.params).toMatchObject({ changed_by: "changed by ops from 10.0.0.5 via vty0" });
  });

  it("queues another download behind one already running, and only reports to a scheduled one waiting", async () => {
    const [d, e] = await makeDevices(2);
    const running = await rawJob(d!);
    await t.db
      .update(jobs)
      .set({ state: "running", leaseOwner: "c1", leaseExpiresAt: later(60_000) })
      .where(eq(jobs.id, running.id));
    const queued = await queueChangeBackup(
      t.db,
      { deviceId: d!, change: { user: "admin" }, debounceMs: 0, maxAttempts: 2 },
      now,
    );
    expect(queued.created).toBe(true);
    const scheduled = await rawJob(e!);
    const reported = await queueChangeBackup(
      t.db,
      { deviceId: e!, change: { user: "admin" }, debounceMs: 30_000, maxAttempts: 2 },
      now,
    );
    expect(reported).toEqual({ jobId: scheduled.id, created: false });
    expect(await getJob(t.db, scheduled.id)).toMatchObject({
      runAfter: now,
      trigger: "schedule",
      params: { changed_by: "changed by admin" },
    });
  });
});
