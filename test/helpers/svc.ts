import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const source = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export type SvcRun = { code: number | null; stdout: string; stderr: string };

/** Runs a command to its end and captures what it printed; `stdin` is written and closed. */
export function runCaptured(
  command: string,
  args: string[],
  options: { env: Record<string, string | undefined>; cwd?: string; stdin?: string },
): Promise<SvcRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

/**
 * `npx svc ...` as an operator runs it: a separate node process, with only PATH, TMPDIR and the given
 * environment (so nothing of the test process's settings leaks in). It runs the source through tsx, not the bin
 * shim: the shim runs dist/svc.js when a build exists, which may be older than the source under test
 * (test/main.test.ts runs the shim on a fresh build).
 */
export const svc = (args: string[], env: Record<string, string> = {}, stdin = ""): Promise<SvcRun> =>
  runCaptured(process.execPath, ["--import", "tsx", source, ...args], {
    env: { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), ...env },
    stdin,
  });
