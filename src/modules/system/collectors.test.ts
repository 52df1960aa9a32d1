import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTOR_NODE_ARGS } from "../../runtime/collector-process.ts";
import { createTestContext, TEST_APP_KEY, type TestContext } from "../../../test/helpers/app.ts";
import { start, stopGroup, type Spawned } from "../../../test/helpers/process.ts";
import { until } from "../../../test/helpers/until.ts";

/**
 * Real collector processes on the test's database: their heartbeats make the collectors and scheduler checks ok and
 * list them in the system information; a collector stopped (cleanly, or killed and silent past 90 s) turns both failed.
 */

/** The real time, moved forward by `skew`: a killed collector's last heartbeat grows old without waiting for it. */
let skew = 0;
const clock = { now: () => new Date(Date.now() + skew) };
let t: TestContext;
let admin: string;
const collectors: Spawned[] = [];

beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterAll(async () => {
  for (const c of collectors) stopGroup(c, "SIGKILL");
  await t.close();
});

function startCollector(): Spawned {
  const collector = start(process.execPath, [...COLLECTOR_NODE_ARGS, "--import", "tsx", "collector/main.ts"], {
    STORAGE_DIR: t.dir,
    DATABASE_URL: t.config.databaseUrl,
    APP_KEY: TEST_APP_KEY,
    COLLECTOR_CONCURRENCY: "7",
  });
  collectors.push(collector);
  return collector;
}

type Check = { name: string; status: string; message: string };
const checks = async () => {
  const run = (await t.call("/api/v1/system/health/run", { method: "POST", token: admin })).body.data as {
    checks: Check[];
  };
  return Object.fromEntries(
    run.checks.filter((c) => c.name === "collectors" || c.name === "scheduler").map((c) => [c.name, c]),
  );
};
const info = async () => (await t.call("/api/v1/system/info", { token: admin })).body.data;

/**
 * Waits until the health checks see a collector and the scheduler report: 300 tries 100 ms apart (30 s or more for
 * a process to start on a loaded machine), then fails with the collector's output.
 */
async function untilReporting(what: string, collector: Spawned) {
  try {
    return await until(what, checks, (c) => c.collectors!.status === "ok" && c.scheduler!.status === "ok", {
      tries: 300,
      everyMs: 100,
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${collector.output()}`);
  }
}

describe("collectors and the scheduler in the health checks", () => {
  it("ok while a collector runs, failed once it stops, ok again when one starts", async () => {
    const first = startCollector();
    const running = await untilReporting("the collector's heartbeats", first);
    expect(running.collectors!.message).toBe("1 collector running");
    const listed = (await info()).collectors;
    expect(listed).toEqual([
      expect.objectContaining({ pid: first.child.pid, concurrency: 7, version: "0.1.0", fresh: true }),
    ]);

    stopGroup(first, "SIGTERM");
    await first.exited;
    const stopped = await checks();
    expect(stopped.collectors).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^No collector has reported/),
    });
    expect(stopped.scheduler).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^The scheduler has never reported/),
    });
    expect((await info()).collectors).toEqual([]);

    const second = startCollector();
    await untilReporting("the second collector's heartbeats", second);

    // Killed: it cannot say goodbye, so it is found out by its silence.
    stopGroup(second, "SIGKILL");
    await second.exited;
    skew = 2 * 60_000;
    const silent = await checks();
    const owner = (await info()).collectors[0].owner as string;
    expect(owner).toMatch(new RegExp(`:${second.child.pid}:`));
    expect(silent.collectors).toMatchObject({
      status: "failed",
      message: expect.stringMatching(
        new RegExp(`^No collector is running: ${owner} \\(last heard 2 min ago\\). Restart it`),
      ),
    });
    expect(silent.scheduler).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^The scheduler was last heard 2 min ago: scheduled tasks do not start/),
    });
    expect((await info()).collectors[0].fresh).toBe(false);
  });
});
