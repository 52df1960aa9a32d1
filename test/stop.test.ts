import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_APP_KEY, type TestContext } from "./helpers/app.ts";
import { buildBundles } from "./helpers/build.ts";
import { freePort, start, stopGroup, waitForHttp, type Spawned } from "./helpers/process.ts";

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
  return { t, api, base, createTag };
}

/** Takes the database's write lock from this test's own connection; returns how to let go. */
async function holdWriteLock(t: TestContext): Promise<() => Promise<void>> {
  const tx = await t.client.transaction("write");
  return () => tx.rollback();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logLines = (s: Spawned) =>
  s
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string; [k: string]: unknown });

describe("stopping the API (SIGTERM)", () => {
  it("lets a request in flight finish, then exits 0", async () => {
    const { t, api, createTag } = await startApi();
    const release = await holdWriteLock(t);
    const inFlight = createTag("in-flight");
    await sleep(500); // the request is in the API, waiting for the lock
    api.child.kill("SIGTERM");
    // Longer than the 5 s after which the API used to cut everything and exit 0; within the default 25 s grace.
    await sleep(6000);
    expect(api.child.exitCode, `the API exited with a request in flight:\n${api.output()}`).toBeNull();
    await release();
    const res = await inFlight;
    expect(res.status, api.output()).toBe(201);
    expect(await api.exited, api.output()).toBe(0);
    expect(logLines(api).map((l) => l.msg)).toContain("stopped");
  });

  it("takes the same signal again within a second as the same stop (a wrapper forwarding Ctrl-C), and still drains", async () => {
    const { t, api, createTag } = await startApi();
    const release = await holdWriteLock(t);
    const inFlight = createTag("forwarded");
    await sleep(500);
    api.child.kill("SIGINT");
    await sleep(50); // a pending signal and its copy would merge into one delivery
    api.child.kill("SIGINT");
    await sleep(1500);
    expect(api.child.exitCode, `the API exited on the forwarded signal:\n${api.output()}`).toBeNull();
    await release();
    expect((await inFlight).status, api.output()).toBe(201);
    expect(await api.exited, api.output()).toBe(0);
    expect(logLines(api).map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        "the same stop signal again (forwarded by npm or another wrapper): still stopping",
        "stopped",
      ]),
    );
  });

  it("exits at once, with 1, on a signal that comes more than a second into the stop", async () => {
    const { t, api, createTag } = await startApi();
    const release = await holdWriteLock(t);
    const inFlight = createTag("forced").then(
      (r) => r.status,
      (err: Error) => err.name,
    );
    await sleep(500);
    api.child.kill("SIGTERM");
    await sleep(2000);
    expect(api.child.exitCode, api.output()).toBeNull();
    api.child.kill("SIGTERM");
    const code = await Promise.race([api.exited, sleep(5000).then(() => "still running")]);
    await release();
    expect(code, api.output()).toBe(1);
    expect(await inFlight).toBe("TypeError");
    expect(logLines(api).map((l) => l.msg)).toContain("second signal while stopping: exiting now");
  });

  it("cuts what is still in flight when the grace period runs out, and exits non-zero", async () => {
    const { t, api, createTag } = await startApi({ SHUTDOWN_GRACE_SECONDS: "1" });
    const release = await holdWriteLock(t);
    const inFlight = createTag("never-finishes").then(
      (r) => r.status,
      (err: Error) => err.name,
    );
    await sleep(500);
    api.child.kill("SIGTERM");
    const code = await Promise.race([api.exited, sleep(8000).then(() => "still running")]);
    await release();
    expect(code, api.output()).toBe(1);
    expect(await inFlight, "the request was cut, not answered").toBe("TypeError");
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
