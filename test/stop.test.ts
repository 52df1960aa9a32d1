import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_APP_KEY, type TestContext } from "./helpers/app.ts";
import { buildBundles } from "./helpers/build.ts";
import { freePort, start, stopGroup, waitForHttp, type Spawned } from "./helpers/process.ts";
import { until } from "./helpers/until.ts";
import { SAME_STOP_WITHIN_MS } from "../src/runtime/stop-signal.ts";

/**
 * The API's stop, as the production build does it (dist/main.js): on SIGTERM it stops accepting, lets the
 * requests in flight finish within SHUTDOWN_GRACE_SECONDS, empties the write-ahead log into the database file,
 * and exits 0; when the grace period runs out it cuts what is left and exits non-zero. A request is kept in
 * flight by holding the database's write lock from this test, so the API's write waits (as it would behind a
 * long import) until the test lets go.
 */

let build: ReturnType<typeof buildBundles>;
const running: Spawned[] = [];
const contexts: TestContext[] = [];
const dirs: string[] = [];

beforeAll(() => void (build = buildBundles()), 120_000);
afterAll(async () => {
  running.forEach((s) => stopGroup(s, "SIGKILL"));
  for (const t of contexts) await t.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  build?.remove();
});

/** The built API on a migrated test database with a token, the collector off. */
async function startApi(env: Record<string, string> = {}) {
  const t = await createTestContext();
  contexts.push(t);
  const token = await t.token();
  const port = await freePort();
  const api = start(process.execPath, [join(build.dir, "main.js")], {
    STORAGE_DIR: t.dir,
    APP_KEY: TEST_APP_KEY,
    PORT: String(port),
    HOST: "127.0.0.1",
    COLLECTOR: "off",
    DATABASE_URL: "",
    ...env,
  });
  running.push(api);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, api);
  const createTag = (name: string) =>
    fetch(`${base}/api/v1/tags`, {
      method: "POST",
      headers: { apitoken: token, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    });
  return { t, api, base, port, token, createTag };
}

/** Takes the database's write lock from this test's own connection; returns how to let go. */
async function holdWriteLock(t: TestContext): Promise<() => Promise<void>> {
  const tx = await t.client.transaction("write");
  return () => tx.rollback();
}

/**
 * POST /tags on a connection of its own, so the test knows which connection carries it. `outcome` is the status,
 * or "cut" when the API closed the connection without answering.
 */
function postTag(base: string, token: string, name: string) {
  const body = JSON.stringify({ name });
  let connected!: (port: number) => void;
  const localPort = new Promise<number>((r) => (connected = r));
  const outcome = new Promise<number | "cut">((resolve) => {
    const req = request(`${base}/api/v1/tags`, {
      method: "POST",
      agent: false,
      headers: { apitoken: token, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    req.on("socket", (socket) => socket.on("connect", () => connected(socket.localPort!)));
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", () => resolve("cut"));
    req.end(body);
  });
  return { localPort, outcome };
}

/**
 * Whether the API process has taken the connection from `clientPort` and read all of its bytes (Linux: its socket
 * is among the process's files, with nothing left to read). Then the request is the API's, in flight.
 */
function apiHasRead(api: Spawned, apiPort: number, clientPort: number): boolean {
  const own = new Set<string>();
  for (const fd of readdirSync(`/proc/${api.child.pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${api.child.pid}/fd/${fd}`);
      if (link.startsWith("socket:[")) own.add(link.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = (address: string) => Number.parseInt(address.split(":")[1]!, 16);
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some(
      ([, local, remote, , queues, , , , , inode]) =>
        local !== undefined &&
        hexPort(local) === apiPort &&
        hexPort(remote!) === clientPort &&
        queues!.endsWith(":00000000") &&
        own.has(inode!),
    );
}

/** Sends a POST /tags the held lock keeps in flight, and waits until the API has it; then its outcome is to come. */
async function requestInFlight(api: Awaited<ReturnType<typeof startApi>>, name: string) {
  const { localPort, outcome } = postTag(api.base, api.token, name);
  const clientPort = await localPort;
  await until("the API to read the request", () => apiHasRead(api.api, api.port, clientPort));
  return { outcome };
}

const logLines = (s: Spawned) =>
  s
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string; time: string; [k: string]: unknown });

/** When the API logged that it began to stop (it marks the stop's start just before). */
async function stoppingLogged(api: Spawned): Promise<number> {
  const line = await until(
    "the API to log that it is stopping",
    () => logLines(api).find((l) => l.msg.startsWith("stopping")),
    (l) => l !== undefined,
  );
  return Date.parse(line!.time);
}

/**
 * The API runs on the system clock, in its own process: a test that needs its clock to have moved past a point
 * waits for that, read from the same clock.
 */
const clockPast = (at: number) => until(`the clock to pass ${new Date(at).toISOString()}`, () => Date.now() > at);

const exitCode = (api: Spawned) =>
  until(
    "the API to exit",
    () => api.child.exitCode,
    (code) => code !== null,
  );

describe("stopping the API (SIGTERM)", () => {
  it("lets a request in flight finish, then exits 0", async () => {
    const started = await startApi();
    const { t, api } = started;
    const release = await holdWriteLock(t);
    const { outcome: inFlight } = await requestInFlight(started, "in-flight");
    api.child.kill("SIGTERM");
    // Past the 5 s after which the API used to cut everything and exit 0; within the default 25 s grace.
    await clockPast((await stoppingLogged(api)) + 6000);
    expect(api.child.exitCode, `the API exited with a request in flight:\n${api.output()}`).toBeNull();
    await release();
    expect(await inFlight, api.output()).toBe(201);
    expect(await api.exited, api.output()).toBe(0);
    expect(logLines(api).map((l) => l.msg)).toContain("stopped");
  });

  it("takes the same signal again within a second as the same stop (a wrapper forwarding Ctrl-C), and still drains", async () => {
    const started = await startApi();
    const { t, api } = started;
    const release = await holdWriteLock(t);
    const { outcome: inFlight } = await requestInFlight(started, "forwarded");
    api.child.kill("SIGINT");
    // Sent once the first is taken: a pending signal and its copy would merge into one delivery.
    await stoppingLogged(api);
    api.child.kill("SIGINT");
    const answer = await until(
      "the API to take the second signal",
      () => logLines(api).find((l) => l.msg.startsWith("the same stop signal") || l.msg.startsWith("second signal")),
      (l) => l !== undefined,
    );
    expect(answer!.msg).toBe("the same stop signal again (forwarded by npm or another wrapper): still stopping");
    expect(api.child.exitCode, `the API exited on the forwarded signal:\n${api.output()}`).toBeNull();
    await release();
    expect(await inFlight, api.output()).toBe(201);
    expect(await api.exited, api.output()).toBe(0);
    expect(logLines(api).map((l) => l.msg)).toContain("stopped");
  });

  it("exits at once, with 1, on a signal that comes more than a second into the stop", async () => {
    const started = await startApi();
    const { t, api } = started;
    const release = await holdWriteLock(t);
    const { outcome: inFlight } = await requestInFlight(started, "forced");
    api.child.kill("SIGTERM");
    await clockPast((await stoppingLogged(api)) + SAME_STOP_WITHIN_MS);
    expect(api.child.exitCode, api.output()).toBeNull();
    api.child.kill("SIGTERM");
    // Within the default 25 s grace: the held request would keep a stop that did not force waiting for it.
    const code = await exitCode(api);
    await release();
    expect(code, api.output()).toBe(1);
    expect(await inFlight).toBe("cut");
    expect(logLines(api).map((l) => l.msg)).toContain("second signal while stopping: exiting now");
  });

  it("cuts what is still in flight when the grace period runs out, and exits non-zero", async () => {
    const started = await startApi({ SHUTDOWN_GRACE_SECONDS: "1" });
    const { t, api } = started;
    const release = await holdWriteLock(t);
    const { outcome: inFlight } = await requestInFlight(started, "never-finishes");
    api.child.kill("SIGTERM");
    const code = await exitCode(api);
    await release();
    expect(code, api.output()).toBe(1);
    expect(await inFlight, "the request was cut, not answered").toBe("cut");
    expect(logLines(api).find((l) => l.msg.startsWith("stopped by force"))).toMatchObject({
      requests_cut: true,
      grace_seconds: 1,
    });
  });

  it("leaves every row in the database file: the WAL is empty after a clean stop, so a plain copy holds them all", async () => {
    const { t, api, createTag } = await startApi();
    const names = Array.from({ length: 20 }, (_, i) => `copied-${i}`);
    for (const name of names) expect((await createTag(name)).status).toBe(201);
    api.child.kill("SIGTERM");
    expect(await api.exited, api.output()).toBe(0);

    const wal = join(t.dir, "netkeep.db-wal");
    expect(existsSync(wal) ? statSync(wal).size : 0, "bytes left in the write-ahead log").toBe(0);
    const copy = mkdtempSync(join(tmpdir(), "netkeep-copy-"));
    dirs.push(copy);
    copyFileSync(join(t.dir, "netkeep.db"), join(copy, "netkeep.db"));
    const copied = createClient({ url: `file:${copy}/netkeep.db` });
    try {
      const { rows } = await copied.execute("select name from tags where name like 'copied-%' order by id");
      expect(rows.map((r) => r.name)).toEqual(names);
    } finally {
      copied.close();
    }
  });
});
