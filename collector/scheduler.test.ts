import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configs, taskRunItems, taskRuns, tasks } from "../src/db/schema/index.ts";
import { getJob } from "../src/platform/jobs/queue.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { createTestContext, manualClock, TEST_APP_KEY, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../test/helpers/fake-device.ts";
import { start, stopGroup, type Spawned } from "../test/helpers/process.ts";
import { until } from "../test/helpers/until.ts";
import { scheduleDueRuns } from "./scheduler.ts";
import { startWorker } from "./worker.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let t: TestContext;
let admin: string;
const clock = manualClock(new Date("2026-06-01T12:00:30Z"));
const spawned: Spawned[] = [];
const fakes: FakeDevice[] = [];

beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
  // The seeded system tasks would start runs of their own as the clock moves; these tests watch their own tasks.
  await t.db.update(tasks).set({ paused: true });
});
afterAll(async () => {
  for (const p of spawned) stopGroup(p, "SIGKILL");
  await Promise.all(fakes.map((f) => f.close()));
  await t.close();
});

const tick = () => scheduleDueRuns({ db: t.db, clock, logger: silentLogger });
const runsOf = (taskId: number) => t.db.select().from(taskRuns).where(eq(taskRuns.taskId, taskId)).orderBy(taskRuns.id);

let names = 0;
async function device(): Promise<number> {
  const res = await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: { device_name: `sched-dev-${++names}`, device_ip: "192.0.2.7", device_vendor: "Cisco" },
  });
  return res.body.data.id;
}
async function createTask(body: Record<string, unknown>) {
  const res = await t.call("/api/v1/tasks", {
    method: "POST",
    token: admin,
    body: { task_name: `sched ${++names}`, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe("the scheduler", () => {
  it("starts one run per slot, and one catch_up run (not one per slot) for the slots missed while it was down", async () => {
    const d = await device();
    const task = await createTask({ task_type: "download_devices", devices: [d], task_cron: "0 * * * *" });
    expect(await tick()).toEqual([]);

    clock.advance(HOUR); // 13:00:30: the 13:00 slot is due
    const [first] = await tick();
    expect(first).toMatchObject({
      taskId: task.id,
      trigger: "schedule",
      missedSlots: 0,
      scheduledFor: new Date("2026-06-01T13:00:00Z"),
    });
    expect(await tick(), "a slot runs once").toEqual([]);
    expect(await t.db.select().from(taskRunItems).where(eq(taskRunItems.runId, first!.id))).toMatchObject([
      { deviceId: d, skipReason: null },
    ]);

    clock.advance(5 * HOUR + 29 * MINUTE); // 18:29:30; 14:00 to 18:00 passed with no scheduler
    const caught = await tick();
    expect(caught).toHaveLength(1);
    expect(caught[0]).toMatchObject({
      trigger: "catch_up",
      missedSlots: 5,
      scheduledFor: new Date("2026-06-01T18:00:00Z"),
    });
    expect(await tick()).toEqual([]);

    clock.advance(40 * MINUTE); // 19:09:30: one slot, but nine minutes late
    expect(await tick()).toMatchObject([
      { trigger: "catch_up", missedSlots: 1, scheduledFor: new Date("2026-06-01T19:00:00Z") },
    ]);
    clock.advance(HOUR - 9 * MINUTE); // 20:00:30
    expect(await tick()).toMatchObject([{ trigger: "schedule", missedSlots: 0 }]);

    const api = await t.call(`/api/v1/tasks/${task.id}/runs?sort=id`, { token: admin });
    expect(api.body.data.map((r: any) => [r.trigger, r.missed_slots, r.scheduled_for])).toEqual([
      ["schedule", 0, "2026-06-01T13:00:00.000Z"],
      ["catch_up", 5, "2026-06-01T18:00:00.000Z"],
      ["catch_up", 1, "2026-06-01T19:00:00.000Z"],
      ["schedule", 0, "2026-06-01T20:00:00.000Z"],
    ]);
    await t.call(`/api/v1/tasks/${task.id}/pause`, { method: "POST", token: admin });
  });

  it("never runs a paused task, and does not catch up on the time it was paused once resumed", async () => {
    const task = await createTask({
      task_type: "download_devices",
      devices: [await device()],
      task_cron: "*/10 * * * *",
      is_paused: true,
    });
    for (let i = 0; i < 6; i++) {
      clock.advance(10 * MINUTE);
      await tick();
    }
    expect(await runsOf(task.id)).toEqual([]);

    await t.call(`/api/v1/tasks/${task.id}/resume`, { method: "POST", token: admin });
    clock.advance(10 * MINUTE);
    const runs = await tick();
    expect(runs).toMatchObject([{ taskId: task.id, trigger: "schedule", missedSlots: 0 }]);
    await t.call(`/api/v1/tasks/${task.id}/pause`, { method: "POST", token: admin });
    clock.advance(HOUR);
    expect(await tick()).toEqual([]);
  });

  it("skips disabled devices (counted as skipped) and resolves targets when the run starts", async () => {
    const a = await device();
    const b = await device();
    const task = await createTask({ task_type: "download_devices", devices: [a, b], task_cron: "*/5 * * * *" });
    await t.call(`/api/v1/devices/${b}/disable`, { method: "POST", token: admin });
    clock.advance(5 * MINUTE);
    const [run] = await tick();
    const shown = await t.call(`/api/v1/task-runs/${run!.id}`, { token: admin });
    expect(shown.body.data).toMatchObject({
      status: "running",
      counts: { total: 2, skipped: 1 },
      progress: { queued: 1, total: 1 },
    });
    await t.call(`/api/v1/tasks/${task.id}/pause`, { method: "POST", token: admin });
  });

  it("follows the wall clock of the task's time zone across the spring-forward night (Europe/Berlin)", async () => {
    const spring = manualClock(new Date("2026-03-27T12:00:00Z"));
    const ctx = await createTestContext({ clock: spring });
    try {
      await ctx.db.update(tasks).set({ paused: true });
      const token = await ctx.token();
      const res = await ctx.call("/api/v1/tasks", {
        method: "POST",
        token,
        body: { task_name: "berlin", task_type: "download_all", task_cron: "30 2 * * *", timezone: "Europe/Berlin" },
      });
      const slots: string[] = [];
      // Every quarter of an hour for four days, as a scheduler would look.
      for (let i = 0; i < 4 * 96; i++) {
        spring.advance(15 * MINUTE);
        for (const run of await scheduleDueRuns({ db: ctx.db, clock: spring, logger: silentLogger })) {
          expect(run.trigger).toBe("schedule");
          slots.push(run.scheduledFor!.toISOString());
        }
      }
      // 02:30 CET, then (02:30 does not exist on the 29th) the moment clocks jump to 03:00 CEST, then 02:30 CEST.
      expect(res.body.data.next_runs).toEqual(slots.slice(0, 3));
      expect(slots).toEqual([
        "2026-03-28T01:30:00.000Z",
        "2026-03-29T01:00:00.000Z",
        "2026-03-30T00:30:00.000Z",
        "2026-03-31T00:30:00.000Z",
      ]);
    } finally {
      await ctx.close();
    }
  });
});

describe("schedulers racing", () => {
  it("two scheduler processes on one database start exactly one run per slot, and only the winner queues its jobs", async () => {
    const TASKS = 4;
    const STEPS = 40;
    const targets = [await device(), await device(), await device()];
    const created: number[] = [];
    for (let i = 0; i < TASKS; i++)
      created.push((await createTask({ task_type: "download_devices", devices: targets, task_cron: "* * * * *" })).id);
    const from = clock.now();
    // The schedulers come up five hours later: every task is owed one catch-up, then a run a minute.
    const startAt = new Date(Math.ceil((from.getTime() + 5 * HOUR) / MINUTE) * MINUTE + 1000);
    const goFile = join(t.dir, "go");
    const child = () => {
      const p = start(process.execPath, ["--import", "tsx", "collector/scheduler.test-child.ts"], {
        DATABASE_URL: t.config.databaseUrl,
        START: startAt.toISOString(),
        STEPS: String(STEPS),
        STEP_MS: String(MINUTE),
        GO_FILE: goFile,
        PACE_MS: "60",
      });
      spawned.push(p);
      return p;
    };
    const a = child();
    const b = child();
    await until(
      "both scheduler processes to be ready",
      () => {
        if ([a, b].some((p) => p.child.exitCode !== null))
          throw new Error(`a scheduler process exited:\n${a.output()}\n---\n${b.output()}`);
        return [a, b].map((p) => p.output());
      },
      (outputs) => outputs.every((o) => o.includes("ready")),
      { tries: 1500 },
    );
    // Both wait for the same moments: each slot is contested by both processes at once.
    writeFileSync(goFile, String(Date.now() + 200));
    expect(await a.exited, a.output()).toBe(0);
    expect(await b.exited, b.output()).toBe(0);

    const startedBy = (p: Spawned): number[] =>
      JSON.parse(
        p
          .output()
          .split("\n")
          .find((l) => l.startsWith('{"started"'))!,
      ).started;
    const [byA, byB] = [startedBy(a), startedBy(b)];
    for (const p of [a, b]) expect(p.output(), "no scheduler error").not.toMatch(/"level":"(error|warn)"/);

    const runs = await t.db.select().from(taskRuns).where(inArray(taskRuns.taskId, created)).orderBy(taskRuns.id);
    expect(runs).toHaveLength(TASKS * (STEPS + 1));
    expect(
      [...byA, ...byB].sort((x, y) => x - y),
      "each run started by exactly one scheduler",
    ).toEqual(runs.map((r) => r.id));
    expect(byA.length, "both schedulers took part").toBeGreaterThan(0);
    expect(byB.length, "both schedulers took part").toBeGreaterThan(0);
    for (const taskId of created) {
      const own = runs.filter((r) => r.taskId === taskId);
      expect(own.map((r) => r.scheduledFor!.getTime())).toEqual(
        Array.from({ length: STEPS + 1 }, (_, i) => startAt.getTime() - 1000 + i * MINUTE),
      );
      // Every minute boundary between the task's creation and the schedulers' first look.
      expect(own[0]).toMatchObject({
        trigger: "catch_up",
        missedSlots: Math.floor(startAt.getTime() / MINUTE) - Math.floor(from.getTime() / MINUTE),
      });
      expect(own.slice(1).every((r) => r.trigger === "schedule" && r.missedSlots === 0)).toBe(true);
    }
    const items = await t.db
      .select()
      .from(taskRunItems)
      .where(
        inArray(
          taskRunItems.runId,
          runs.map((r) => r.id),
        ),
      );
    expect(items).toHaveLength(runs.length * targets.length);
    for (const taskId of created) await t.db.update(tasks).set({ paused: true }).where(eq(tasks.id, taskId));
  }, 60_000);
});

const USERNAME = "netops";
const PASSWORD = "Scheduler-Test-Pass-5521";
const { prompt: PROMPT, script: iosAnswer } = iosScript("edge-1", [
  "hostname edge-1",
  "!",
  "interface Vlan20",
  " ip address 192.0.2.20 255.255.255.0",
  "!",
  "end",
]);

async function fakeIos(): Promise<FakeDevice> {
  const fake = await startFakeDevice({
    script: iosAnswer,
    initPrompt: `\r\n${PROMPT}`,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
  fakes.push(fake);
  return fake;
}

/** A run goes through scheduler, queue and fake devices: 600 tries 50 ms apart, 30 s or more. */
const runPatience = { tries: 600, everyMs: 50 };
describe("runs end to end against fake devices", () => {
  it("run now: the collector downloads every device; outcomes, counts and config links come from its jobs", async () => {
    const template = await builtinTemplateId(t, "cisco-ios");
    const [good1, good2, wrongPassword] = [await fakeIos(), await fakeIos(), await fakeIos()];
    const ids = [
      await addLoopbackDevice(t, admin, {
        port: good1.port,
        templateId: template,
        username: USERNAME,
        password: PASSWORD,
      }),
      await addLoopbackDevice(t, admin, {
        port: good2.port,
        templateId: template,
        username: USERNAME,
        password: PASSWORD,
      }),
      await addLoopbackDevice(t, admin, {
        port: wrongPassword.port,
        templateId: template,
        username: USERNAME,
        password: "not-the-password",
      }),
    ];
    const task = await createTask({ task_type: "download_devices", devices: ids, task_cron: "0 0 1 1 *" });
    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "e2e-collector", connectTimeoutMs: 10_000 },
      {
        concurrency: 4,
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
        "the run to finish",
        async () => (await t.call(runUrl, { token: admin })).body.data.status !== "running",
        Boolean,
        runPatience,
      );

      const run = (await t.call(runUrl, { token: admin })).body.data;
      expect(run).toMatchObject({
        status: "failed",
        trigger: "manual",
        counts: { total: 3, succeeded: 2, failed: 1, unchanged: 0, skipped: 0 },
        progress: { finished: 3, queued: 0, running: 0 },
      });
      expect(run.finished_at).not.toBeNull();
      const items = (await t.call(`${runUrl}/devices?sort=id`, { token: admin })).body.data;
      expect(items.map((i: any) => [i.device_id, i.status, i.outcome])).toEqual([
        [ids[0], "succeeded", "success"],
        [ids[1], "succeeded", "success"],
        [ids[2], "failed", "auth_failed"],
      ]);
      const refused = (await getJob(t.db, items[2].job_id))!;
      expect(refused.message).toBeTruthy();
      expect(items[2].error).toBe(refused.message);
      for (const item of items.slice(0, 2)) {
        expect(item.duration_ms).toBeGreaterThanOrEqual(0);
        // The links point at the versions this job stored for this device.
        const stored = await t.db
          .select()
          .from(configs)
          .where(and(eq(configs.deviceId, item.device_id), eq(configs.jobId, item.job_id)));
        expect(stored.length).toBeGreaterThan(0);
        expect([...item.config_ids].sort()).toEqual(stored.map((c) => c.id).sort());
        expect(item.config_urls).toEqual(item.config_ids.map((id: number) => `http://localhost/api/v1/configs/${id}`));
      }
      const failures = await t.call(`/api/v1/tasks/${task.id}/last-run/failures`, { token: admin });
      expect(failures.body.data.failures.map((i: any) => i.device_id)).toEqual([ids[2]]);

      // The same task on its schedule: the scheduler starts it, the collector runs it, and this time nothing changed.
      clock.advance(HOUR);
      await t.db.update(tasks).set({ cron: "* * * * *", scheduleFrom: clock.now() }).where(eq(tasks.id, task.id));
      clock.advance(MINUTE);
      const [scheduled] = await scheduleDueRuns({ db: t.db, clock, logger: silentLogger });
      expect(scheduled).toMatchObject({ taskId: task.id, trigger: "schedule" });
      const scheduledUrl = `/api/v1/task-runs/${scheduled!.id}`;
      await until(
        "the scheduled run to finish",
        async () => (await t.call(scheduledUrl, { token: admin })).body.data.status !== "running",
        Boolean,
        runPatience,
      );
      expect((await t.call(scheduledUrl, { token: admin })).body.data.counts).toEqual({
        total: 3,
        succeeded: 0,
        unchanged: 2,
        failed: 1,
        skipped: 0,
      });
      await t.db.update(tasks).set({ paused: true }).where(eq(tasks.id, task.id));
    } finally {
      await worker.stop();
    }
    for (const f of [good1, good2]) expect(f.unexpected).toEqual([]);
  });

  it("the retention purge task runs as a device-less job and reports what it did", async () => {
    const [purge] = await t.db.select().from(tasks).where(eq(tasks.systemKey, "retention_purge"));
    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "purge-collector" },
      {
        concurrency: 1,
        pollIntervalMs: 50,
        leaseMs: 60_000,
        jobTimeLimitMs: 60_000,
      },
    );
    try {
      const res = await t.call(`/api/v1/tasks/${purge!.id}/run`, { method: "POST", token: admin });
      expect(res.status).toBe(202);
      const runUrl = new URL(res.body.data.status_url).pathname;
      await until(
        "the purge to finish",
        async () => (await t.call(runUrl, { token: admin })).body.data.status !== "running",
        Boolean,
        runPatience,
      );
      expect((await t.call(runUrl, { token: admin })).body.data).toMatchObject({
        status: "succeeded",
        task_type: "purge_configs",
        counts: { total: 1, succeeded: 1 },
      });
      const [item] = (await t.call(`${runUrl}/devices`, { token: admin })).body.data;
      expect(item).toMatchObject({ device_id: null, status: "succeeded", outcome: "success" });
      expect(item.message).toBe("the retention policy keeps every version; nothing to purge");
    } finally {
      await worker.stop();
    }
  });
});

describe("a collector process", () => {
  it("started after downtime catches each overdue task up once, and runs its jobs", async () => {
    const template = await builtinTemplateId(t, "cisco-ios");
    const fake = await fakeIos();
    const id = await addLoopbackDevice(t, admin, {
      port: fake.port,
      templateId: template,
      username: USERNAME,
      password: PASSWORD,
    });
    const task = await createTask({ task_type: "download_devices", devices: [id], task_cron: "* * * * *" });
    // Real time now: the task has been owed a run a minute for the last ten minutes.
    await t.db
      .update(tasks)
      .set({ scheduleFrom: new Date(Date.now() - 10 * MINUTE - 30_000) })
      .where(eq(tasks.id, task.id));
    const collector = start(process.execPath, ["--import", "tsx", "collector/main.ts"], {
      STORAGE_DIR: t.dir,
      DATABASE_URL: t.config.databaseUrl,
      APP_KEY: TEST_APP_KEY,
    });
    spawned.push(collector);
    try {
      await until(
        "the catch-up run to finish",
        async () => {
          const [run] = await runsOf(task.id);
          return Boolean(run?.finishedAt);
        },
        Boolean,
        { tries: 800, everyMs: 50 },
      );
      const runs = await runsOf(task.id);
      expect(runs[0]).toMatchObject({ trigger: "catch_up" });
      expect(runs[0]!.missedSlots).toBeGreaterThanOrEqual(10);
      // A minute may have turned meanwhile: then that slot ran on time, as an ordinary scheduled run.
      expect(runs.slice(1).every((r) => r.trigger === "schedule")).toBe(true);
      const shown = await t.call(`/api/v1/task-runs/${runs[0]!.id}`, { token: admin });
      expect(shown.body.data).toMatchObject({ status: "succeeded", counts: { succeeded: 1 } });
      const logged = collector
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(logged).toContainEqual(expect.objectContaining({ msg: "task run started", trigger: "catch_up" }));
    } finally {
      stopGroup(collector, "SIGTERM");
      expect(await collector.exited, collector.output()).toBe(0);
    }
  }, 60_000);
});
