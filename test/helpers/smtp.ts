import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./process.ts";

/**
 * A Python that has aiosmtpd (Debian: apt-get install python3-aiosmtpd; .ci/run installs it): the one on PATH,
 * else the system's, which is where the Debian package goes when PATH leads to another Python (pyenv).
 */
const python = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import aiosmtpd"]).status === 0);

export const smtpSinkAvailable = (): boolean => python !== undefined;

/** One accepted message: its envelope, and its headers and parts as Python's e-mail parser decoded them. */
export type ReceivedMail = {
  mail_from: string;
  rcpt_tos: string[];
  subject: string;
  from: string;
  to: string;
  content_type: string;
  text: string | null;
  html: string | null;
};

/**
 * A real SMTP server on loopback (test/helpers/smtp-sink.py, aiosmtpd) that keeps every message it accepts;
 * `received()` reads them back in arrival order.
 */
export async function startSmtpSink(options: { username?: string; password?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-smtp-"));
  const port = await freePort();
  const auth = options.username ? [options.username, options.password ?? ""] : [];
  const child = spawn(python!, [join(import.meta.dirname, "smtp-sink.py"), dir, String(port), ...auth], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the SMTP sink did not start:\n${output}`)), 15_000);
    const seen = (d: Buffer) => {
      output += d;
      if (output.includes(`ready ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", (d) => (output += d));
    child.on("exit", (code) => reject(new Error(`the SMTP sink exited (${code}):\n${output}`)));
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    port,
    received(): ReceivedMail[] {
      return readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as ReceivedMail);
    },
    async close() {
      child.stdin!.end();
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
