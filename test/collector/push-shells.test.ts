import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Target } from "../../collector/collect.ts";
import { pushLines, type PushRequest } from "../../collector/push.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import type { devices } from "../../src/db/schema/index.ts";
import { parseTemplate, type ConnectionTemplate } from "../../src/modules/templates/template-schema.ts";
import { freePort, stopGroup, type Spawned } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";
import {
  createTestUser,
  randomPassword,
  removeTestUser,
  sshdUnavailable,
  startSshd,
  type Sshd,
} from "../helpers/sshd.ts";
import { startTelnetd, telnetdUnavailable } from "../helpers/telnetd.ts";

/**
 * Pushes with the built-in linux-generic template's push section to real servers on loopback: OpenSSH sshd, and
 * GNU telnetd (the same template over Telnet, with /bin/login's prompts). The lines are shell commands writing
 * into a scratch directory, so what was applied is read back from the disk, not from the push's own account.
 */

const USER = "netkeep-push-test";
const unavailable = sshdUnavailable() ?? telnetdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the push-over-real-servers tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/collector/push-shells.test.ts skipped: ${unavailable}`);
}

function linuxGeneric(): ConnectionTemplate {
  const parsed = parseTemplate(
    readFileSync(new URL("../../collector/templates/linux-generic.yaml", import.meta.url), "utf8"),
  );
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  return parsed.template;
}

describe.skipIf(unavailable)("push to real servers with the linux-generic template", () => {
  let password: string;
  let sshd: Sshd | undefined;
  let inetd: Spawned | undefined;
  let telnetPort: number;
  let serverDir: string;
  const scratches: string[] = [];

  beforeAll(async () => {
    password = randomPassword();
    createTestUser(USER, password);
    sshd = await startSshd({ user: USER });
    serverDir = mkdtempSync(join(tmpdir(), "netkeep-push-telnetd-"));
    telnetPort = await freePort();
    inetd = await startTelnetd(serverDir, telnetPort);
  });

  afterAll(async () => {
    await sshd?.stop();
    if (inetd) {
      stopGroup(inetd);
      await inetd.exited;
    }
    for (const dir of [serverDir, ...scratches]) if (dir) rmSync(dir, { recursive: true, force: true });
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

  const freshScratch = () => {
    const dir = mkdtempSync(join(tmpdir(), "netkeep-push-scratch-"));
    chmodSync(dir, 0o777); // written by the test account
    scratches.push(dir);
    return dir;
  };

  const targets: Record<string, () => Target> = {
    "OpenSSH sshd": () => ({
      device: { ip: sshd!.host, portOverride: sshd!.port, hostKeyFingerprint: null } as typeof devices.$inferSelect,
      template: linuxGeneric(),
      login: { username: USER, password },
    }),
    // /bin/login asks "<hostname> login: " and "Password: ", which the default login prompts match; /bin/sh prompts "$ ".
    Telnet: () => ({
      device: { ip: "127.0.0.1", portOverride: telnetPort, hostKeyFingerprint: null } as typeof devices.$inferSelect,
      template: { ...linuxGeneric(), protocol: "telnet", port: 23, prompt: "^[$#] $" },
      login: { username: USER, password },
    }),
  };

  const push = (target: Target, request: PushRequest) =>
    pushLines(
      { target, limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 10_000 }, connectTimeoutMs: 5_000 },
      request,
      new AbortController().signal,
      { connected: false },
    );

  for (const [name, target] of Object.entries(targets)) {
    it(`${name}: every line runs, in order`, async () => {
      const dir = freshScratch();
      const outcome = await push(target(), {
        lines: [`mkdir ${dir}/a`, `echo one > ${dir}/a/f`, `echo two >> ${dir}/a/f`],
        save: true,
      });
      expect(outcome.status, outcome.message + outcome.transcript).toBe("success");
      expect(readFileSync(join(dir, "a/f"), "utf8")).toBe("one\ntwo\n");
      expect(outcome.transcript).toContain(`> echo one > ${dir}/a/f\n`);
      expect(outcome.transcript).not.toContain(password);
    });

    it(`${name}: a line the shell refuses stops the push, and nothing after it runs`, async () => {
      const dir = freshScratch();
      const outcome = await push(target(), {
        lines: [`echo one > ${dir}/f`, `cat ${dir}/missing`, `echo two > ${dir}/g`],
        save: true,
      });
      expect(outcome.status, outcome.transcript).toBe("failed");
      expect(outcome.failedLine).toMatchObject({ index: 1, line: `cat ${dir}/missing` });
      expect(outcome.failedLine!.answer).toContain("No such file or directory");
      expect(readFileSync(join(dir, "f"), "utf8")).toBe("one\n");
      expect(existsSync(join(dir, "g"))).toBe(false);
    });
  }
});
