import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tasks } from "../src/db/schema/index.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../test/helpers/app.ts";
import { until } from "../test/helpers/until.ts";
import { scheduleDueRuns } from "./scheduler.ts";
import { startWorker } from "./worker.ts";

let t: TestContext;
let admin: string;
const clock = manualClock(new Date("2026-06-01T00:00:30Z"));
beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
  // Only the database backup task may start runs here.
  await t.db.update(tasks).set({ paused: true });
});
afterAll(() => t.close());

/** A backup writes and compresses the whole database: 600 tries 50 ms apart, 30 s or more. */
const backupPatience = { tries: 600, everyMs: 50 };
const runStatus = async (runUrl: string): Promise<string> => (await t.call(runUrl, { token: admin })).body.data.status;

const backupTask = async () => (await t.db.select().from(tasks).where(eq(tasks.systemKey, "database_backup")))[0]!;

describe("the database backup system task", () => {
  it("is seeded running nightly, backs the database up on its schedule and keeps the number the settings say", async () => {
    const task = await backupTask();
    expect(task).toMatchObject({ type: "backup_database", cron: "0 1 * * *" });
    await t.db.update(tasks).set({ paused: false, scheduleFrom: clock.now() }).where(eq(tasks.id, task.id));
    expect(
      (await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { backups: { keep: 2 } } })).status,
    ).toBe(200);
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock,
        logger: silentLogger,
        owner: "backup-collector",
        backups: { databaseUrl: t.config.databaseUrl, storageDir: t.dir },
      },
      {
        concurrency: 1,
        pollIntervalMs: 50,
        leaseMs: 60_000,
        jobTimeLimitMs: 60_000,
      },
    );
    try {
      const taken: string[] = [];
      for (let night = 0; night < 3; night++) {
        clock.advance(night === 0 ? 60 * 60_000 : 24 * 60 * 60_000); // to 01:00:30, each night
        const [run] = await scheduleDueRuns({ db: t.db, clock, logger: silentLogger });
        expect(run).toMatchObject({ taskId: task.id, trigger: "schedule" });
        const runUrl = `/api/v1/task-runs/${run!.id}`;
        await until(
          "the backup to finish",
          () => runStatus(runUrl),
          (status) => status !== "running",
          backupPatience,
        );
        expect((await t.call(runUrl, { token: admin })).body.data).toMatchObject({
          status: "succeeded",
          task_type: "backup_database",
        });
        const [item] = (await t.call(`${runUrl}/devices`, { token: admin })).body.data;
        expect(item.message).toMatch(/^wrote netkeep-\d{8}T\d{9}Z\.db\.gz \(\d+ bytes\)/);
        taken.push(item.message.split(" ")[1]);
      }
      const listed = (await t.call("/api/v1/system/backups", { token: admin })).body.data.map(
        (b: { id: string }) => b.id,
      );
      expect(listed).toEqual([taken[2], taken[1]]);
    } finally {
      await worker.stop();
      await t.db.update(tasks).set({ paused: true });
    }
  });

  it("records a failure on the run when the collector cannot take backups", async () => {
    const task = await backupTask();
    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "no-backup-collector" },
      {
        concurrency: 1,
        pollIntervalMs: 50,
        leaseMs: 60_000,
        jobTimeLimitMs: 60_000,
      },
    );
    try {
      const res = await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin });
      expect(res.status).toBe(202);
      const runUrl = new URL(res.body.data.status_url).pathname;
      await until(
        "the backup to finish",
        () => runStatus(runUrl),
        (status) => status !== "running",
        backupPatience,
      );
      const [item] = (await t.call(`${runUrl}/devices`, { token: admin })).body.data;
      expect(item).toMatchObject({ status: "failed", outcome: "error" });
      expect(item.message).toMatch(/database backup failed: .*without its database location/);
    } finally {
      await worker.stop();
    }
  });
});
