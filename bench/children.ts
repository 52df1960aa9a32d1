import { spawn, type ChildProcess } from "node:child_process";

/**
 * A bench child: a TypeScript entry run as `node [nodeArgs] --import tsx entry args`, or a built bundle (a .js
 * entry) as `node [nodeArgs] entry args` (so its pid is the Node process itself, whose /proc entries
 * bench/proc-stats.ts reads), with an IPC channel, its output kept (the
 * tail) for error messages, and waits that fail when it exits or a time limit passes.
 */
export type BenchChild = {
  child: ChildProcess;
  pid: number;
  /** The next IPC message, in order of arrival. */
  nextMessage<T>(what: string, timeoutMs: number): Promise<T>;
  /** Resolves once the output contains `text`. */
  waitForOutput(text: string, timeoutMs: number): Promise<void>;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
};

const KEEP_OUTPUT = 64 * 1024;
const live = new Set<BenchChild>();

/** Stops every child still running (the script was interrupted): they would otherwise outlive it. */
export const stopAllChildren = () => Promise.all([...live].map((c) => c.stop(2000)));

export function startChild(
  name: string,
  entry: string,
  args: string[],
  options: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): BenchChild {
  const loader = entry.endsWith(".js") ? [] : ["--import", "tsx"];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...loader, entry, ...args], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: { ...process.env, ...options.env },
  });
  const listeners = new Set<() => void>();
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-KEEP_OUTPUT);
    listeners.forEach((l) => l());
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const messages: unknown[] = [];
  child.on("message", (m) => {
    messages.push(m);
    listeners.forEach((l) => l());
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      listeners.forEach((l) => l());
      resolve();
    }),
  );

  /** Polls `ready` on every event from the child until it returns a value. */
  const until = <T>(what: string, timeoutMs: number, ready: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        fn();
      };
      const check = () => {
        const value = ready();
        if (value !== undefined) return done(() => resolve(value));
        if (exitCode !== undefined)
          done(() =>
            reject(new Error(`${name} exited (${exitCode}) while waiting for ${what}:\n${output.slice(-3000)}`)),
          );
      };
      const timer = setTimeout(
        () =>
          done(() => reject(new Error(`${name}: no ${what} within ${timeoutMs / 1000} s:\n${output.slice(-3000)}`))),
        timeoutMs,
      );
      listeners.add(check);
      check();
    });

  const handle: BenchChild = {
    child,
    pid: child.pid!,
    nextMessage: <T>(what: string, timeoutMs: number) =>
      until<T>(what, timeoutMs, () => (messages.length ? (messages.shift() as T) : undefined)),
    waitForOutput: (text, timeoutMs) =>
      until(`'${text}' in its output`, timeoutMs, () => (output.includes(text) ? true : undefined)).then(() => {}),
    output: () => output,
    async stop(graceMs = 10_000) {
      if (exitCode !== undefined) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(handle);
  void exited.then(() => live.delete(handle));
  return handle;
}
