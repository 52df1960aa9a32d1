import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { createServer } from "node:net";
import { until } from "./until.ts";

/** A port the OS says is free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A port free for both UDP and TCP on loopback. */
export async function freeUdpAndTcpPort(): Promise<number> {
  for (;;) {
    const server = createServer();
    const tcpPort = await new Promise<number>((resolve) =>
      server.listen(0, "0.0.0.0", () => resolve((server.address() as { port: number }).port)),
    );
    await new Promise((resolve) => server.close(resolve));
    const udp = createSocket("udp4");
    const ok = await new Promise<boolean>((resolve) => {
      udp.once("error", () => resolve(false));
      udp.bind(tcpPort, "0.0.0.0", () => resolve(true));
    });
    await new Promise<void>((resolve) => (ok ? udp.close(() => resolve()) : resolve()));
    if (ok) return tcpPort;
  }
}

export type Spawned = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** Starts a process and keeps everything it prints, for assertions and for failure messages. */
export function start(command: string, args: string[], env: Record<string, string>, cwd = process.cwd()): Spawned {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let text = "";
  child.stdout!.on("data", (d) => (text += d));
  child.stderr!.on("data", (d) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Waits for a URL to answer 200, or fails with what the process printed. */
export async function waitForHttp(url: string, spawned: Spawned): Promise<void> {
  await failWithOutput(
    spawned,
    until(
      `${url} to answer 200`,
      async () => {
        if (spawned.child.exitCode !== null)
          throw new Error(`process exited (${spawned.child.exitCode}) before ${url} answered`);
        return fetch(url).then(
          (res) => res.status,
          () => "not listening yet",
        );
      },
      (status) => status === 200,
      { tries: 300, everyMs: 100 },
    ),
  );
}

/** A wait on a started process that fails says what the process printed. */
export async function failWithOutput<T>(spawned: Spawned, waiting: Promise<T>): Promise<T> {
  try {
    return await waiting;
  } catch (e) {
    throw new Error(`${(e as Error).message}:\n${spawned.output()}`);
  }
}

/** Ends a process group (the launcher and anything it started). */
export function stopGroup(spawned: Spawned, signal: NodeJS.Signals = "SIGTERM"): void {
  try {
    process.kill(-spawned.child.pid!, signal);
  } catch {
    // already gone
  }
}
