import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeConfigText } from "../../src/modules/configs/storage/text.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { until } from "../helpers/until.ts";
import { downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { freePort, stopGroup, type Spawned } from "../helpers/process.ts";
import { createTestUser, randomPassword, removeTestUser } from "../helpers/sshd.ts";
import { startTelnetd, telnetdUnavailable } from "../helpers/telnetd.ts";

/**
 * The collector against a real Telnet server on loopback: GNU inetutils telnetd (Debian's inetutils-telnetd),
 * started per connection by inetutils-inetd from a config file in a temp dir, logging in through /bin/login
 * with a throwaway account whose shell is /bin/sh (prompt "$ "). The template is a user template made through
 * the API, as a user with a Linux box (or a BusyBox appliance) behind Telnet would make it.
 */

const USER = "netkeep-telnet-test";
// printf prints UTF-8 the command line itself does not carry: a Telnet client's typing may be 7-bit, the output not.
const COMMANDS = ["cat /etc/hostname", "uname -sr", "printf 'caf\\303\\251\\n'"];
/** What this machine's own shell prints for a command: computed here, not taken from the download. */
const expectedOutput = (command: string) =>
  normalizeConfigText(execFileSync("/bin/sh", ["-c", command], { encoding: "utf8" }));

const TEMPLATE = [
  "vendor: Linux",
  "description: Linux host, POSIX shell over Telnet",
  "protocol: telnet",
  // /bin/login asks "<hostname> login: " and "Password: ", which the default login prompts match.
  "prompt: '^[$#] $'",
  "commands:",
  ...COMMANDS.map((c) => `  - ${JSON.stringify(c)}`),
  "teardown:",
  "  - exit",
  "",
].join("\n");

const unavailable = telnetdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the real-telnetd tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/collector/telnet.test.ts skipped: ${unavailable}`);
}

describe.skipIf(unavailable)("collector against a real telnetd (inetutils-telnetd)", () => {
  let t: TestContext;
  let admin: string;
  let dir: string;
  let port: number;
  let inetd: Spawned | undefined;
  let password: string;
  let templateId: number;

  beforeAll(async () => {
    password = randomPassword();
    createTestUser(USER, password);
    dir = mkdtempSync(join(tmpdir(), "netkeep-telnetd-"));
    port = await freePort();
    inetd = await startTelnetd(dir, port);
    t = await createTestContext();
    admin = await t.token();
    const res = await t.call("/api/v1/templates", {
      method: "POST",
      token: admin,
      body: { name: "linux-telnet", code: TEMPLATE },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    templateId = res.body.data.id;
  });

  afterAll(async () => {
    if (inetd) {
      stopGroup(inetd);
      await inetd.exited;
    }
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // A session's shell may still be exiting; userdel refuses a user with live processes.
    await until(
      "the test account to be removed",
      () => {
        try {
          removeTestUser(USER);
          return true;
        } catch (err) {
          return String(err);
        }
      },
      (removed) => removed === true,
      { tries: 21, everyMs: 100 },
    );
  });

  const createDevice = async (name: string, devicePort: number, devicePassword: string): Promise<number> => {
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: name,
        device_ip: "127.0.0.1",
        device_vendor: "Cisco",
        device_port_override: devicePort,
        device_template_id: templateId,
        device_username: USER,
        device_password: devicePassword,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };

  const options = { limits: { idleTimeoutMs: 10_000 }, connectTimeoutMs: 5_000, jobTimeLimitMs: 20_000 };
  const why = (job: { outcome: string | null; message: string | null; result?: unknown }) =>
    `${job.outcome}: ${job.message} ${JSON.stringify(job.result)}\n--- inetd said:\n${inetd?.output().slice(-2000) ?? ""}`;

  it("logs in at login:/Password:, stores exactly what each command prints, then finds nothing changed", async () => {
    const id = await createDevice("telnetd-password", port, password);

    const first = await downloadOnce(t, id, options);
    expect(first.outcome, why(first)).toBe("success");
    expect(Object.fromEntries(await latestConfigs(t, id))).toEqual(
      Object.fromEntries(COMMANDS.map((c) => [c, expectedOutput(c)])),
    );
    expect(expectedOutput(COMMANDS[2]!)).toBe("café\n");

    const second = await downloadOnce(t, id, options);
    expect(second.outcome, why(second)).toBe("unchanged");
  });

  it("reports a wrong password as auth_failed, and the password is nowhere in the job", async () => {
    const wrong = `wrong-${randomPassword()}`;
    const id = await createDevice("telnetd-wrong-password", port, wrong);

    const started = Date.now();
    const job = await downloadOnce(t, id, options);
    expect(job.outcome, why(job)).toBe("auth_failed");
    expect(JSON.stringify(job)).not.toContain(wrong);
    expect(await latestConfigs(t, id)).toEqual(new Map());
    // login(1) waits ~3 s (pam_faildelay) before asking again; the session does not wait for more than that.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("reports a port nobody listens on as unreachable", async () => {
    const id = await createDevice("telnetd-nothing-there", await freePort(), password);

    const started = Date.now();
    const job = await downloadOnce(t, id, options);
    expect(job.outcome, why(job)).toBe("unreachable");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
