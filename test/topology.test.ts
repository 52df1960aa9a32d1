import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_APP_KEY, type TestContext } from "./helpers/app.ts";
import { buildBundles } from "./helpers/build.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "./helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "./helpers/fake-device.ts";
import { startHranaServer, type HranaServer } from "./helpers/hrana-server.ts";
import { freePort, start, stopGroup, waitForHttp, type Spawned } from "./helpers/process.ts";
import { until } from "./helpers/until.ts";

/**
 * compose.yaml's topology, as processes: the API (`node dist/main.js`, COLLECTOR=off) and a collector of its own
 * (`node dist/collector.js`), both from the production build, sharing one storage directory and nothing else.
 * A download asked of the API is done by the collector, and the API serves what it stored. Both stop cleanly.
 * Then the same with the database behind a libSQL server (test/helpers/hrana-server.ts, on the same file), as
 * when API and collectors run on different hosts: DATABASE_URL=http://...
 */

const USERNAME = "netops";
const PASSWORD = "Topology-Test-Pass-8812";
const { prompt, script } = iosScript("edge-7", [
  "hostname edge-7",
  "!",
  "interface Gi1/0/1",
  " description uplink",
  "!",
  "end",
]);

let build: ReturnType<typeof buildBundles>;
let t: TestContext;
let device: FakeDevice;
let server: HranaServer;
const running: Spawned[] = [];

beforeAll(async () => {
  build = buildBundles();
  t = await createTestContext();
  server = await startHranaServer(join(t.dir, "netkeep.db"));
  device = await startFakeDevice({
    script,
    initPrompt: `\r\n${prompt}`,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
}, 120_000);

afterAll(async () => {
  running.forEach((s) => stopGroup(s, "SIGKILL"));
  await device?.close();
  await server?.close();
  await t?.close();
  build?.remove();
});

/** The built API (collector off) and a built collector on one database; stopped by the caller. */
async function startPair(databaseUrl: string) {
  const port = await freePort();
  const shared = { STORAGE_DIR: t.dir, APP_KEY: TEST_APP_KEY, DATABASE_URL: databaseUrl };
  const api = start(process.execPath, [join(build.dir, "main.js")], {
    ...shared,
    PORT: String(port),
    HOST: "127.0.0.1",
    COLLECTOR: "off",
  });
  const collector = start(process.execPath, ["--max-semi-space-size=16", join(build.dir, "collector.js")], shared);
  running.push(api, collector);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, api);
  const stop = async () => {
    api.child.kill("SIGTERM");
    collector.child.kill("SIGTERM");
    expect(await api.exited, api.output()).toBe(0);
    expect(await collector.exited, collector.output()).toBe(0);
  };
  return { api, collector, base, stop };
}

async function getJson(url: string, token: string) {
  const res = await fetch(url, { headers: { apitoken: token } });
  return {
    status: res.status,
    body: (await res.json()) as { data: Record<string, unknown> & Record<string, unknown>[] },
  };
}

describe.each([
  ["the SQLite file in their shared storage directory", () => ""],
  ["a libSQL server", () => server.url],
])("API and collector as two processes on one database (compose.yaml): %s", (_, databaseUrl) => {
  it("the API queues a download, the separate collector runs it, the API serves the stored configuration", {
    timeout: 120_000,
  }, async () => {
    const token = await t.token();
    const sessionsBefore = device.sessions;
    const serverRequestsBefore = server.requests;
    const id = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: USERNAME,
      password: PASSWORD,
    });
    const { api, collector, base, stop } = await startPair(databaseUrl());

    const job = await getJson(`${base}/api/v1/download-now/${id}?wait=60`, token);
    expect(job.status, `${api.output()}\n---\n${collector.output()}`).toBe(200);
    expect(job.body.data, collector.output()).toMatchObject({ state: "finished", outcome: "success" });

    const latest = await getJson(`${base}/api/v1/configs/latest-by-deviceid/${id}`, token);
    expect(latest.status).toBe(200);
    const runningConfig = (latest.body.data as Record<string, unknown>[]).find((c) => c.command === IOS_CONFIG_COMMAND);
    expect(runningConfig, JSON.stringify(latest.body)).toBeDefined();
    const content = await fetch(`${base}/api/v1/configs/${runningConfig!.id}/content`, {
      headers: { apitoken: token },
    });
    expect(await content.text()).toContain(" description uplink");
    expect(device.sessions - sessionsBefore).toBe(1);
    if (databaseUrl())
      expect(server.requests - serverRequestsBefore, "requests the processes sent the libSQL server").toBeGreaterThan(
        10,
      );
    await stop();
  });
});

describe("a libSQL server busy during a download", () => {
  it("the collector waits it out: the download is stored and the job succeeds", { timeout: 120_000 }, async () => {
    const slow = await startFakeDevice({
      script,
      initPrompt: `\r\n${prompt}`,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: USERNAME, password: PASSWORD },
      latencyMs: 300,
    });
    try {
      const token = await t.token();
      const id = await addLoopbackDevice(t, token, {
        port: slow.port,
        templateId: await builtinTemplateId(t, "cisco-ios"),
        username: USERNAME,
        password: PASSWORD,
      });
      const { api, collector, base, stop } = await startPair(server.url);
      const job = getJson(`${base}/api/v1/download-now/${id}?wait=60`, token);
      // Busy from the moment the device is asked for its configuration, for longer than the session has left.
      await until(
        "the device to be asked for its configuration",
        () => slow.received.some((l) => l.startsWith(IOS_CONFIG_COMMAND)),
        Boolean,
        { tries: 1500 },
      );
      server.busy(true);
      // Kept as a sleep: the server cannot tell the collector's store from the API's reads, so no refused
      // statement shows the store has met the busy database; 3 s outlasts the session's few 300 ms answers.
      await new Promise((r) => setTimeout(r, 3000));
      server.busy(false);
      const done = await job;
      expect(done.status, `${api.output()}\n---\n${collector.output()}`).toBe(200);
      expect(done.body.data, collector.output()).toMatchObject({ state: "finished", outcome: "success", attempts: 1 });
      const latest = await getJson(`${base}/api/v1/configs/latest-by-deviceid/${id}`, token);
      expect((latest.body.data as Record<string, unknown>[]).map((c) => c.command)).toContain(IOS_CONFIG_COMMAND);
      await stop();
    } finally {
      server.busy(false);
      await slow.close();
    }
  });
});
