import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_APP_KEY, type TestContext } from "../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type ScriptAnswer } from "../../../test/helpers/fake-device.ts";
import { svc } from "../../../test/helpers/svc.ts";
import { start, stopGroup } from "../../../test/helpers/process.ts";
import { sql } from "drizzle-orm";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { getJob } from "../../platform/jobs/queue.ts";
import { until } from "../../../test/helpers/until.ts";

const SVC_SOURCE = fileURLToPath(new URL("../main.ts", import.meta.url));

/**
 * svc device:debug as an operator runs it (a process of its own, on the service's database) against the fake SSH
 * device, and the transcript the API keeps of a failed download.
 */

const USERNAME = "netops";
const PASSWORD = "Debug-Login-Pass-8812";
const ENABLE = "Debug-Enable-Pass-3307";
const COMMUNITY = "Debug-Community-5510";
const RUNNING_CONFIG = [
  "hostname core-3",
  `snmp-server community ${COMMUNITY} RO`,
  "interface Gi0/1",
  " description uplink",
  "end",
];
const { prompt: PROMPT, script: iosAnswer } = iosScript("core-3", RUNNING_CONFIG);

let t: TestContext;
let token: string;
let env: Record<string, string>;
const started: FakeDevice[] = [];

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  env = { STORAGE_DIR: t.dir, APP_KEY: TEST_APP_KEY };
});
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  await t.close();
});

/** An IOS device that asks for the enable password (and echoes it, when told to); `answer` overrides the script's answers. */
async function iosDevice(
  name: string,
  answer: (line: string) => ScriptAnswer = iosAnswer,
  echoesPassword = false,
): Promise<number> {
  const device = await startFakeDevice({
    initPrompt: `\r\ncore-3>`,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
    script: (line) => {
      if (line === "enable") return "enable\r\nPassword: ";
      if (line === ENABLE) return `${echoesPassword ? ENABLE : ""}\r\n${PROMPT}`;
      return answer(line);
    },
  });
  started.push(device);
  return addLoopbackDevice(t, token, {
    name,
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
    device_enable_password: ENABLE,
  });
}

describe("svc device:debug", () => {
  it("prints the session as it happens, secrets masked, and stores the download", async () => {
    const id = await iosDevice("debug-ok");
    const run = await svc(["device:debug", "debug-ok"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^Debugging device debug-ok \(id \d+\) as job \d+; the session follows, secrets masked\.$/,
    );
    // The enable password, sent in the session, and the community, printed by the device, are masked.
    expect(lines).toContain("| [sent] enable");
    expect(lines).toContain("| [sent] <secret hidden>");
    expect(lines).toContain(`| [sent] ${IOS_CONFIG_COMMAND}`);
    expect(lines).toContain("| snmp-server community <secret hidden> RO");
    expect(lines).toContain("| hostname core-3");
    expect(run.stdout).not.toContain(ENABLE);
    expect(run.stdout).not.toContain(COMMUNITY);
    expect(run.stdout).not.toContain(PASSWORD);
    expect(lines.at(-2)).toMatch(/^Job \d+ ended success: \d+ of \d+ command outputs changed$/);
    expect((await latestConfigs(t, id)).get(IOS_CONFIG_COMMAND)).toContain("hostname core-3");
    const log = (await t.call("/api/v1/activity-logs?filter[action]=device.debug", { token })).body.data;
    expect(log).toMatchObject([{ username: "svc device:debug", subject_id: id }]);
  });

  it("fails with the outcome when the download fails, and the API keeps the masked transcript", async () => {
    // The device echoes the enable password as it is typed: the transcript masks it there too.
    const id = await iosDevice(
      "debug-fails",
      (line) => (line === IOS_CONFIG_COMMAND ? [line, "% Not authorized", PROMPT].join("\r\n") : iosAnswer(line)),
      true,
    );
    const run = await svc(["device:debug", String(id)], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/Job \d+ ended output_invalid: '.*' returned text without the template's config_marker/);
    expect(run.stderr).toContain(
      `the download failed (output_invalid); GET /api/v1/devices/${id}/last-failure keeps this transcript`,
    );
    expect(run.stdout + run.stderr).not.toContain(ENABLE);

    const failure = await t.call(`/api/v1/devices/${id}/last-failure`, { token });
    expect(failure.status).toBe(200);
    expect(failure.body.data).toMatchObject({ outcome: "output_invalid" });
    const transcript: string = failure.body.data.transcript;
    expect(transcript).toContain(`[sent] ${IOS_CONFIG_COMMAND}`);
    expect(transcript).toContain("% Not authorized");
    expect(transcript).toContain("[sent] <secret hidden>\n<secret hidden>\ncore-3#");
    expect(transcript).not.toContain(ENABLE);
  });

  it("interrupted with Ctrl-C, ends its job at once and frees the device", async () => {
    // The configuration command gets its echo and then nothing, as from a hung device: the session waits.
    const id = await iosDevice("debug-hangs", (line) =>
      line === IOS_CONFIG_COMMAND ? `${line}\r\n` : iosAnswer(line),
    );
    const child = spawn(process.execPath, ["--import", "tsx", SVC_SOURCE, "device:debug", "debug-hangs"], {
      env: { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        if (stdout.includes(`| [sent] ${IOS_CONFIG_COMMAND}`)) resolve();
      });
      child.on("close", () => reject(new Error(`svc ended before the session got going: ${stdout}${stderr}`)));
    });
    child.kill("SIGINT");
    expect(await exited).toBe(1);
    const jobId = Number(/as job (\d+)/.exec(stdout)![1]);
    const job = (await getJob(t.db, jobId))!;
    expect(job).toMatchObject({
      state: "finished",
      outcome: "timeout",
      message: "svc device:debug was interrupted (SIGINT)",
      leaseOwner: null,
    });
    expect(stderr).toContain(`interrupted (SIGINT): job ${jobId} ended`);
    // The device is free: the next download-now is a new job.
    const next = await t.call(`/api/v1/download-now/${id}`, { token });
    expect(next.body.data.id).not.toBe(jobId);
  });

  it("says which device it cannot find", async () => {
    const run = await svc(["device:debug", "no-such-device"], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no device has the id or name 'no-such-device' (GET /api/v1/devices lists them)");
  });
});

describe("GET /devices/{id}/last-failure", () => {
  it("answers 404 for a device that never failed, and for one outside the caller's scope", async () => {
    const id = await iosDevice("never-failed");
    const none = await t.call(`/api/v1/devices/${id}/last-failure`, { token });
    expect(none.status).toBe(404);
    expect(none.body.message).toBe(`A failed download of device ${id} not found`);
    await t.role({ name: "failure-scoped", tags: ["elsewhere"] });
    const scoped = await t.token(undefined, { role: "failure-scoped" });
    expect((await t.call(`/api/v1/devices/${id}/last-failure`, { token: scoped })).status).toBe(404);
  });

  it("holds the device under a collector's lease, renewed while it runs, so a killed session frees it within one lease", async () => {
    // The device logs in, then answers nothing: the session waits for it.
    const { prompt, script } = iosScript("stuck-9", ["hostname stuck-9", "end"]);
    const device = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: USERNAME, password: PASSWORD },
      faults: { stallAfterBytes: 0 },
    });
    started.push(device);
    const id = await addLoopbackDevice(t, token, {
      name: "debug-stuck",
      port: device.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: USERNAME,
      password: PASSWORD,
    });
    const source = fileURLToPath(new URL("../main.ts", import.meta.url));
    const debug = start(process.execPath, ["--import", "tsx", source, "device:debug", "debug-stuck"], {
      ...env,
      COLLECTOR_LEASE_SECONDS: "3",
    });
    try {
      /** How far ahead of now the job's lease runs, and when it runs out. */
      const lease = async () => {
        const [row] = await t.db.all<{ until: number }>(
          sql`select lease_expires_at as until from jobs where device_id = ${id} and state = 'running'`,
        );
        return row ? { until: Number(row.until), ahead: Number(row.until) - Date.now() } : undefined;
      };
      const first = await until("the debug session's job to run", lease, Boolean, { tries: 301, everyMs: 50 }).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n${debug.output()}`);
        },
      );
      // Never further ahead than the lease (3 s), where the session's time limit (10 min) was used before.
      expect(first!.ahead).toBeLessThanOrEqual(3_000);
      const later = await until(
        "the lease to be renewed",
        async () => (await lease()) ?? first!,
        (lease) => lease.until !== first!.until,
        { tries: 201, everyMs: 50 },
      );
      // Renewed while the session runs.
      expect(later.until).toBeGreaterThan(first!.until);
      expect(later.ahead).toBeLessThanOrEqual(3_000);
    } finally {
      stopGroup(debug, "SIGKILL");
      await debug.exited;
    }
  });
});
