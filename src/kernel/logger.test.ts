import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger, withFields } from "./logger.ts";
import { freePort } from "../../test/helpers/process.ts";
import { until } from "../../test/helpers/until.ts";

describe("createLogger", () => {
  it("writes one JSON object a line with time, level, message and fields, from LOG_LEVEL up", () => {
    const lines: string[] = [];
    const logger = createLogger((l) => lines.push(l), { level: "warn" });
    logger.debug("not written");
    logger.info("not written either");
    logger.warn("disk filling", { free_bytes: 1024, path: "/var/lib/netkeep" });
    logger.error("gone");
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0]!);
    expect(first).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: "warn",
      msg: "disk filling",
      free_bytes: 1024,
      path: "/var/lib/netkeep",
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: "error", msg: "gone" });
  });

  it("puts a context's fields on every line, the line's own fields winning", () => {
    const lines: string[] = [];
    const job = withFields(
      createLogger((l) => lines.push(l)),
      { job_id: 42, device: 1 },
    );
    job.info("job finished", { device: 7, outcome: "success" });
    expect(JSON.parse(lines[0]!)).toMatchObject({ job_id: 42, device: 7, outcome: "success" });
  });

  it("writes one readable line for a terminal", () => {
    const lines: string[] = [];
    createLogger((l) => lines.push(l), { human: true }).warn("collector exited; restarting in 2s", {
      code: 1,
      signal: "SIGKILL",
      note: "two words",
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN  collector exited; restarting in 2s code=1 signal=SIGKILL note="two words"$/,
    );
  });
});

describe("the default log, stderr", () => {
  it("loses no line when the process exits at once after writing, however much it wrote", async () => {
    // Lines are gathered and written together, off the call that logs them: what is left when process.exit runs is
    // written then. (Written as Node writes to a pipe, most of these were lost once the reader fell behind.)
    const script = `import { createLogger } from "${new URL("./logger.ts", import.meta.url).href}";
      const log = createLogger();
      for (let i = 0; i < 20000; i++) log.info("line", { i, padding: "x".repeat(100) });
      process.exit(3);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(3);
    const numbers = stderr
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(numbers).toEqual(Array.from({ length: 20000 }, (_, i) => i));
  }, 60_000);
});

describe("the launcher's log (src/main.ts as a process, stderr not a terminal)", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** Starts the API, sends one request with a known X-Request-Id, stops it, and returns what it wrote to stderr. */
  async function runApi(logLevel: string): Promise<string[]> {
    const storage = mkdtempSync(join(tmpdir(), "netkeep-log-"));
    dirs.push(storage);
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        ...process.env,
        STORAGE_DIR: storage,
        PORT: String(port),
        HOST: "127.0.0.1",
        APP_KEY: "",
        DATABASE_URL: "",
        ADMIN_PASSWORD: "",
        COLLECTOR: "off",
        LOG_LEVEL: logLevel,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    try {
      await until(
        "the API to answer its health check",
        async () => {
          if (child.exitCode !== null) throw new Error(`the API exited:\n${stderr}`);
          const res = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { "x-request-id": "probe-1" } }).catch(
            () => undefined,
          );
          return res?.status;
        },
        (status) => status === 200,
        { tries: 300, everyMs: 100 },
      );
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
    return stderr.split("\n").filter((l) => l.trim());
  }

  it("writes JSON lines, at debug including each request with its id", async () => {
    const lines = (await runApi("debug")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", msg: "netkeep API listening" }));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "debug",
        msg: "request",
        route: "/healthz",
        status: 200,
        request_id: "probe-1",
      }),
    );
  }, 60_000);

  it("LOG_LEVEL=warn leaves out the info and debug lines", async () => {
    const lines = (await runApi("warn")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.level === "info" || l.level === "debug")).toEqual([]);
  }, 60_000);
});
