import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../app.ts";
import { openSecretBox } from "../../runtime/bootstrap.ts";
import { claimNextJob, enqueueDeviceJob, PRIORITY } from "../../platform/jobs/queue.ts";
import { finishJob } from "../tasks/settle.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { until } from "../../../test/helpers/until.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { processHeartbeats } from "../../db/schema/index.ts";
import { startHealthSchedule } from "./schedule.ts";
import { recordHeartbeat } from "../../platform/jobs/heartbeats.ts";
import { storeConfig } from "../configs/storage/store.ts";
import { indexAllPending } from "../configs/search/search-index.ts";

/**
 * The health checks against their real causes, on a clock the test moves: a job left waiting, failed backups,
 * an app key that is not the one the credentials were saved with. Collectors and the scheduler: collector.test.ts.
 */

const clock = manualClock(new Date("2026-06-01T12:00:00Z"));
let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterAll(() => t.close());

type Check = { name: string; status: string; message: string; value: number | null };
const runChecks = async (token = admin) => {
  const res = await t.call("/api/v1/system/health/run", { method: "POST", token });
  expect(res.status).toBe(200);
  return res.body.data as { id: number; status: string; checks: Check[] };
};
const checkNamed = async (name: string) => (await runChecks()).checks.find((c) => c.name === name)!;

let deviceCounter = 0;
const device = async () =>
  (
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: `health-dev-${++deviceCounter}`,
        device_ip: `192.0.2.${100 + deviceCounter}`,
        device_vendor: "Cisco",
      },
    })
  ).body.data.id as number;

describe("health checks", () => {
  it("lists every check, each with a status and a message", async () => {
    const run = await runChecks();
    expect(run.checks.map((c) => c.name)).toEqual([
      "database",
      "collectors",
      "remote_zones",
      "scheduler",
      "queue",
      "disk",
      "search_index",
      "backups",
      "app_key",
      "webhooks",
      "syslog",
    ]);
    expect(run.checks.find((c) => c.name === "database")).toMatchObject({
      status: "ok",
      message: expect.stringMatching(/^Reachable; a write took \d+ ms$/),
    });
    expect(run.checks.find((c) => c.name === "disk")!.message).toContain(t.dir);
    // No collector in this test: the health of the whole is failed, and says why.
    expect(run.checks.find((c) => c.name === "collectors")).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^No collector has reported/),
    });
    expect(run.status).toBe("failed");
  });

  it("queue: warning, then failed, as a queued job waits; ok once it is taken", async () => {
    const { job } = await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId: await device(), trigger: "schedule", priority: PRIORITY.scheduled, maxAttempts: 1 },
      clock.now(),
    );
    expect(await checkNamed("queue")).toMatchObject({ status: "ok", value: 0 });
    clock.advance(20 * 60_000);
    expect(await checkNamed("queue")).toMatchObject({
      status: "warning",
      value: 1200,
      message:
        "1 job waiting; the oldest for 20 min: the collectors cannot keep up or none runs. Start more collectors or raise COLLECTOR_CONCURRENCY",
    });
    clock.advance(60 * 60_000);
    expect(await checkNamed("queue")).toMatchObject({ status: "failed", value: 4800 });
    const claimed = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(await checkNamed("queue")).toMatchObject({ status: "ok", message: "0 jobs waiting; the oldest for 0 s" });
    await finishJob(t.db, claimed!, "test-collector", { outcome: "success" }, clock.now());
  });

  it("backups: the share of failed downloads in the last 24 h; ok once they age out", async () => {
    clock.advance(25 * 3_600_000); // the previous test's success leaves the window
    const finish = async (outcome: "success" | "unreachable") => {
      await enqueueDeviceJob(
        t.db,
        {
          type: "download",
          deviceId: await device(),
          trigger: "schedule",
          priority: PRIORITY.scheduled,
          maxAttempts: 1,
        },
        clock.now(),
      );
      const job = (await claimNextJob(t.db, "test-collector", clock.now(), 60_000))!;
      await finishJob(t.db, job, "test-collector", { outcome, message: "no route to host" }, clock.now());
    };
    expect(await checkNamed("backups")).toMatchObject({
      status: "ok",
      message: "No backups finished in the last 24 h",
    });
    for (const outcome of ["success", "success", "success", "success", "unreachable"] as const) await finish(outcome);
    expect(await checkNamed("backups")).toMatchObject({
      status: "warning",
      value: 20,
      message: expect.stringMatching(/^1 of 5 backups failed in the last 24 h \(20%\): see/),
    });
    for (let i = 0; i < 5; i++) await finish("unreachable");
    expect(await checkNamed("backups")).toMatchObject({ status: "failed", value: 60 });
    clock.advance(24 * 3_600_000 + 1000);
    expect(await checkNamed("backups")).toMatchObject({ status: "ok", value: 0 });
  });

  it("app key: failed when it cannot decrypt the stored credentials, ok with the right one", async () => {
    const cred = await t.call("/api/v1/device-credentials", {
      method: "POST",
      token: admin,
      body: { cred_name: "health-cred", cred_username: "netops", cred_password: "S3cret-Health" },
    });
    expect(cred.status).toBe(201);
    expect(await checkNamed("app_key")).toMatchObject({
      status: "ok",
      message: "Present, and decrypts the stored credentials",
    });
    // The same database served with another key, as after a lost storage/app.key.
    const otherKey = "base64:" + Buffer.alloc(32, 9).toString("base64");
    const wrong = createApp({ db: t.db, config: t.config, clock, secrets: await openSecretBox(otherKey) });
    const res = await wrong.request("/api/v1/system/health/run", { method: "POST", headers: { apitoken: admin } });
    const body = (await res.json()) as { data: { checks: Check[] } };
    expect(body.data.checks.find((c) => c.name === "app_key")).toMatchObject({
      status: "failed",
      message: expect.stringMatching(
        new RegExp(`^The app key cannot decrypt credential ${cred.body.data.id}: it is not the key`),
      ),
    });
    expect(JSON.stringify(body)).not.toContain("S3cret-Health");
    expect(await checkNamed("app_key")).toMatchObject({ status: "ok" });
  });
});

describe("search index", () => {
  it("warning once 1,000 stored versions wait to be indexed, ok once indexed", async () => {
    const deviceId = await device();
    for (let v = 0; v < 1000; v++) {
      await storeConfig(t.db, {
        deviceId,
        command: "show running-config",
        text: `hostname r1\nsnmp-server location rack ${v}\n`,
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: clock.now(),
      });
    }
    expect(await checkNamed("search_index")).toMatchObject({
      status: "warning",
      value: 1000,
      message: expect.stringMatching(/^1000 versions waiting to be indexed: search still finds them/),
    });
    await indexAllPending(t.db);
    expect(await checkNamed("search_index")).toMatchObject({ status: "ok", value: 0 });
  });
});

describe("collectors", () => {
  it("warning while one of two is silent, ok once it reports again, and a collector silent a day no longer counts", async () => {
    const who = (owner: string) => ({
      kind: "collector" as const,
      owner,
      host: "nms",
      pid: 1,
      version: "0.1.0",
      concurrency: 5,
      startedAt: clock.now(),
    });
    await recordHeartbeat(t.db, who("nms:1:a"), clock.now());
    await recordHeartbeat(t.db, who("nms:2:b"), clock.now());
    expect(await checkNamed("collectors")).toMatchObject({ status: "ok", message: "2 collectors running" });
    clock.advance(2 * 60_000);
    await recordHeartbeat(t.db, who("nms:1:a"), clock.now());
    expect(await checkNamed("collectors")).toMatchObject({
      status: "warning",
      message: expect.stringMatching(/^1 collector running, but nms:2:b \(last heard 2 min ago\) stopped reporting/),
    });
    await recordHeartbeat(t.db, who("nms:2:b"), clock.now());
    expect(await checkNamed("collectors")).toMatchObject({ status: "ok", message: "2 collectors running" });
    clock.advance(25 * 3_600_000);
    expect(await checkNamed("collectors")).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^No collector has reported/),
    });
    clock.advance(7 * 24 * 3_600_000);
    await runChecks();
    expect(await t.db.select().from(processHeartbeats)).toEqual([]);
  });
});

describe("health-latest", () => {
  it("answers the stored pass without running the checks, on every path; runs them when the newest is over 10 min old", async () => {
    const ran = await runChecks();
    for (const path of [
      "/api/v1/system/health",
      "/api/v1/health-latest",
      "/api/v2/system/health",
      "/api/v2/dashboard/health-latest",
    ]) {
      // rConfig's paths add rConfig's check fields beside these (docs/rconfig.md).
      expect((await t.call(path, { token: admin })).body.data).toMatchObject(ran);
    }
    clock.advance(11 * 60_000);
    const fresh = (await t.call("/api/v1/health-latest", { token: admin })).body.data;
    expect(fresh.id).toBeGreaterThan(ran.id);
    expect(fresh.trigger).toBe("schedule");
    expect(fresh.ran_at).toBe(clock.now().toISOString());
  });

  it("shows a role that sees only some devices each check's status, but not the figures that count every device", async () => {
    await t.role({ name: "edge-health", permissions: ["system.read", "system.write"], tags: ["edge"] });
    const scoped = await t.token(["system.read", "system.write"], { role: "edge-health" });
    for (let i = 0; i < 2; i++)
      await enqueueDeviceJob(
        t.db,
        {
          type: "download",
          deviceId: await device(),
          trigger: "schedule",
          priority: PRIORITY.scheduled,
          maxAttempts: 1,
        },
        clock.now(),
      );
    const full = await runChecks();
    const queue = full.checks.find((c) => c.name === "queue")!;
    expect(queue.message).toMatch(/^2 jobs/);
    for (const path of ["/api/v1/system/health", "/api/v1/health-latest", "/api/v2/dashboard/health-latest"]) {
      const seen = (await t.call(path, { token: scoped })).body.data as { status: string; checks: Check[] };
      expect(seen.status).toBe(full.status);
      expect(seen.checks.map((c) => [c.name, c.status])).toEqual(full.checks.map((c) => [c.name, c.status]));
      expect(JSON.stringify(seen)).not.toContain("2 jobs");
      for (const c of seen.checks.filter((x) => ["queue", "search_index", "backups", "webhooks"].includes(x.name))) {
        expect(c.value).toBeNull();
        expect(c.message).toMatch(
          /^(OK|Needs attention|Failing)\. This check counts every device and your role sees only some/,
        );
      }
      // Checks of the service itself keep their figures (rConfig's paths add fields of their own).
      expect(seen.checks.find((c) => c.name === "disk")).toMatchObject(full.checks.find((c) => c.name === "disk")!);
    }
    const ran = (await runChecks(scoped)).checks.find((c) => c.name === "queue")!;
    expect(ran).toMatchObject({ status: queue.status, value: null });
    expect(JSON.stringify(ran)).not.toContain("2 jobs");
    // Take the jobs so later checks start from an empty queue.
    while (await claimNextJob(t.db, "test-collector", clock.now(), 60_000));
  });

  it("needs system.read to read and system.write to run", async () => {
    const reader = await t.token(["system.read"]);
    expect((await t.call("/api/v1/system/health", { token: reader })).status).toBe(200);
    expect((await t.call("/api/v1/system/health/run", { method: "POST", token: reader })).status).toBe(403);
    const other = await t.token(["devices.read"]);
    expect((await t.call("/api/v2/dashboard/health-latest", { token: other })).status).toBe(403);
  });
});

describe("the schedule", () => {
  it("runs and stores the checks on its interval", async () => {
    const before = (await t.call("/api/v1/system/health", { token: admin })).body.data.id;
    const schedule = startHealthSchedule(
      { db: t.db, clock, config: t.config, secrets: t.secrets, logger: silentLogger },
      50,
    );
    try {
      const latest = await until(
        "a scheduled health run",
        async () => (await t.call("/api/v1/system/health", { token: admin })).body.data.id,
        (id) => id !== before,
        { tries: 100, everyMs: 50 },
      );
      expect(latest).toBeGreaterThan(before);
      expect((await t.call("/api/v1/system/health", { token: admin })).body.data.trigger).toBe("schedule");
    } finally {
      schedule.stop();
    }
  });
});

describe("system information", () => {
  it("tells the runtime, the database and what it holds", async () => {
    const info = (await t.call("/api/v2/system/info", { token: admin })).body.data;
    expect(info).toMatchObject({
      version: "0.1.0",
      runtime: { name: "node", version: process.versions.node },
      database: { kind: "embedded file" },
      collectors: [],
    });
    const { statSync } = await import("node:fs");
    // Pages in use, some of them still only in the write-ahead log: at most the two files together.
    const onDisk = statSync(`${t.dir}/netkeep.db`).size + statSync(`${t.dir}/netkeep.db-wal`).size;
    expect(info.database.size_bytes % 4096).toBe(0);
    expect(info.database.size_bytes).toBeGreaterThan(100_000);
    expect(info.database.size_bytes).toBeLessThanOrEqual(onDisk);
    expect(info.storage_used_bytes).toBeGreaterThanOrEqual(info.database.size_bytes);
    expect(info.counts.devices).toBe(deviceCounter);
    expect(info.uptime_seconds).toBeGreaterThanOrEqual(0);
  });
});
