import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "../src/platform/auth/passwords.ts";
import { findUserByName } from "../src/platform/auth/users.ts";
import { openDatabase } from "../src/db/client.ts";
import { buildDist } from "./helpers/build.ts";
import { runCaptured } from "./helpers/svc.ts";
import { freePort, start, stopGroup, waitForHttp, type Spawned } from "./helpers/process.ts";
import { until } from "./helpers/until.ts";

/** As long as a process needs to start on a loaded machine: 300 tries 100 ms apart, 30 s or more. */
const processPatience = { tries: 300, everyMs: 100 };

const dirs: string[] = [];
const running: Spawned[] = [];
afterAll(() => {
  running.forEach((s) => stopGroup(s, "SIGKILL"));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

// The production build, as `npm ci` leaves it: these tests start what an operator starts, so a broken build fails here.
beforeAll(() => buildDist(), 120_000);

const launch = (env: Record<string, string>) => {
  const s = start(process.execPath, ["dist/main.js"], env);
  running.push(s);
  return s;
};
/** `npm start` itself: npm, the shell it runs the script in, and the API (npm passes its signals on). */
const npmStart = (env: Record<string, string>) => {
  const s = start("npm", ["start", "--silent"], env);
  running.push(s);
  return s;
};

/** The processes in the launcher's group, e.g. the collector it started. */
const groupMembers = (pgid: number) =>
  execFileSync("ps", ["-o", "pid=,args=", "-g", String(pgid)], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.trim());

/**
 * Live collector processes (a zombie no one reaps yet counts as gone) started for one storage directory, by
 * any launch: an orphan of the first launch is in that launch's process group, not the second's.
 */
function collectorsFor(storage: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
        if (!cmdline.includes("dist/collector.js")) return [];
        if (!readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`STORAGE_DIR=${storage}`)) return [];
        const state = readFileSync(`/proc/${entry}/stat`, "utf8").replace(/^.*\) /s, "")[0];
        return state === "Z" ? [] : [Number(entry)];
      } catch {
        return []; // it ended while we looked
      }
    });
}

/** Polls until `done` holds, up to a generous bound, then says what it last saw. */
describe("npm start (dist/main.js)", () => {
  it("migrates a fresh storage dir, creates admin once with its password in a file only it reads, serves, runs a collector, and stops on SIGTERM", async () => {
    const storage = mkdtempSync(join(tmpdir(), "netkeep-main-"));
    dirs.push(storage);
    const port = await freePort();
    const env = {
      STORAGE_DIR: storage,
      PORT: String(port),
      HOST: "127.0.0.1",
      APP_KEY: "",
      DATABASE_URL: "",
      ADMIN_PASSWORD: "",
      COLLECTOR: "on",
    };

    const first = launch(env);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, first);
    // The first password goes to a file only the service's user reads, never to the console (container and journal logs).
    const passwordFile = join(storage, "admin-password");
    expect(first.output()).toContain(
      `Created user 'admin'; its password is in ${passwordFile} (readable only by this user)`,
    );
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    const password = readFileSync(passwordFile, "utf8").trim();
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(first.output()).not.toContain(password);
    expect(statSync(join(storage, "app.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(storage, "netkeep.db")).isFile()).toBe(true);
    expect(groupMembers(first.child.pid!).some((l) => l.includes("dist/collector.js"))).toBe(true);

    const res = await fetch(`http://127.0.0.1:${port}/api/v1/devices`);
    expect(res.status).toBe(401);

    stopGroup(first);
    expect(await first.exited).toBe(0);

    const second = launch({ ...env, COLLECTOR: "off" });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, second);
    expect(second.output()).not.toContain("Created user");
    expect(groupMembers(second.child.pid!).some((l) => l.includes("dist/collector.js"))).toBe(false);
    stopGroup(second);
    expect(await second.exited).toBe(0);
  });

  it("a collector it started exits when the API is killed with SIGKILL, and a restart runs exactly one", {
    timeout: 90_000,
  }, async () => {
    const storage = mkdtempSync(join(tmpdir(), "netkeep-main-"));
    dirs.push(storage);
    const port = await freePort();
    const env = {
      STORAGE_DIR: storage,
      PORT: String(port),
      HOST: "127.0.0.1",
      APP_KEY: "",
      DATABASE_URL: "",
      ADMIN_PASSWORD: "",
      COLLECTOR: "on",
    };

    const first = launch(env);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, first);
    const [collector, ...more] = await until(
      "a collector process",
      () => collectorsFor(storage),
      (pids) => pids.length > 0,
      processPatience,
    );
    expect(more, first.output()).toEqual([]);
    // Let it finish starting (store thread, scheduler), so it is a running collector that is orphaned, not a starting one.
    await until(
      "the collector to start",
      () => first.output(),
      (out) => out.includes("collector started"),
      processPatience,
    );
    expect(first.output()).toContain("collector started");

    first.child.kill("SIGKILL"); // the API process alone, not its group
    await first.exited;
    expect(
      await until(
        "the orphaned collector to end",
        () => collectorsFor(storage),
        (pids) => !pids.includes(collector!),
        processPatience,
      ),
      first.output(),
    ).not.toContain(collector);

    const second = launch(env);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, second);
    await until(
      "the new collector to start",
      () => second.output(),
      (out) => out.includes("collector started"),
      processPatience,
    );
    expect(collectorsFor(storage), second.output()).toHaveLength(1);
    stopGroup(second);
    expect(await second.exited).toBe(0);
  });

  // npm's own process, as a container runtime signals it; or its whole process group, as `timeout` or a service
  // manager stopping a control group does: then the API gets the signal and, a moment later, npm's copy of it,
  // which is the same stop, not a second one. (A terminal's Ctrl-C, SIGINT, npm does not pass on.)
  it.each([
    ["npm's own process", (npm: Spawned) => void npm.child.kill("SIGTERM")],
    ["its whole process group", (npm: Spawned) => stopGroup(npm, "SIGTERM")],
  ])(
    "npm start stops gracefully on SIGTERM to %s: npm exits 0 once the API and its collector have stopped",
    { timeout: 90_000 },
    async (_, signal) => {
      const storage = mkdtempSync(join(tmpdir(), "netkeep-main-"));
      dirs.push(storage);
      const port = await freePort();
      const npm = npmStart({
        STORAGE_DIR: storage,
        PORT: String(port),
        HOST: "127.0.0.1",
        APP_KEY: "",
        DATABASE_URL: "",
        ADMIN_PASSWORD: "",
        COLLECTOR: "on",
      });
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, npm);
      await until(
        "the collector to start",
        () => npm.output(),
        (out) => out.includes("collector started"),
        processPatience,
      );

      signal(npm);
      expect(await npm.exited, npm.output()).toBe(0);
      expect(npm.output()).toContain('"msg":"stopped"');
      expect(npm.output()).not.toContain("exiting now");
      const answered = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => "still serving",
        () => "refused",
      );
      expect(answered, "the API outlived npm").toBe("refused");
      expect(
        await until(
          "no collectors left",
          () => collectorsFor(storage),
          (pids) => pids.length === 0,
          processPatience,
        ),
        "collectors left running",
      ).toEqual([]);
    },
  );

  it("on a port in use creates nothing and says so in one line; the next start creates admin, whose password svc user:password resets", {
    timeout: 90_000,
  }, async () => {
    const root = mkdtempSync(join(tmpdir(), "netkeep-main-"));
    dirs.push(root);
    const storage = join(root, "storage");
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
    const env = {
      STORAGE_DIR: storage,
      PORT: String(port),
      HOST: "127.0.0.1",
      APP_KEY: "",
      DATABASE_URL: "",
      ADMIN_PASSWORD: "",
      COLLECTOR: "off",
    };

    const refused = launch(env);
    expect(await refused.exited).toBe(1);
    expect(refused.output().trim()).toBe(
      `netkeep: cannot listen on 127.0.0.1:${port}: the address is already in use (another netkeep, or another program, is listening there; set PORT or HOST)`,
    );
    expect(existsSync(storage), "storage created by a start that could not serve").toBe(false);
    await new Promise((resolve) => taken.close(resolve));

    const served = launch(env);
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, served);
    expect(served.output()).toMatch(/Created user 'admin'; its password is in \S+admin-password /);
    stopGroup(served);
    expect(await served.exited).toBe(0);

    // The console as installed: bin/svc.js, which runs the build.
    const reset = await runCaptured(
      process.execPath,
      ["bin/svc.js", "user:password", "--username", "admin", "--password-stdin"],
      {
        env: { PATH: process.env.PATH ?? "", STORAGE_DIR: storage },
        stdin: "a new admin password\n",
      },
    );
    expect(reset.code, reset.stderr).toBe(0);
    const { db, client } = await openDatabase(`file:${storage}/netkeep.db`);
    try {
      expect(await verifyPassword("a new admin password", (await findUserByName(db, "admin"))!.passwordHash)).toBe(
        true,
      );
    } finally {
      client.close();
    }
  });

  it("refuses a bad setting with one line naming the variable", async () => {
    const bad = launch({ PORT: "http", STORAGE_DIR: mkdtempSync(join(tmpdir(), "netkeep-main-")) });
    expect(await bad.exited).toBe(1);
    expect(bad.output().trim()).toBe('netkeep: PORT="http" is invalid: must be a port number');
    const badKey = launch({
      APP_KEY: "base64:c2hvcnQ=",
      PORT: "1",
      STORAGE_DIR: mkdtempSync(join(tmpdir(), "netkeep-main-")),
    });
    expect(await badKey.exited).toBe(1);
    expect(badKey.output().trim()).toMatch(/^netkeep: APP_KEY must decode to 32 bytes, got 5/);
  });
});
