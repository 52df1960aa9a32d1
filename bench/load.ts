import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { startChild } from "./children.ts";

export type ServerKind = "app" | "baseline";
export type RunningServer = { origin: string; stop(): Promise<void> };
export type Measurement = { rps: number; p50: number; p99: number; requests: number; timeouts: number };

const serverEntry = fileURLToPath(new URL("./server.ts", import.meta.url));

/** Starts bench/server.ts in a child process on a loopback port; `profileDir` adds --cpu-prof. */
export async function startServer(
  kind: ServerKind,
  env: Record<string, string>,
  profileDir?: string,
): Promise<RunningServer> {
  const nodeArgs = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  const server = startChild(`the ${kind} server`, serverEntry, [kind], { env, nodeArgs });
  try {
    const { port } = await server.nextMessage<{ port: number }>("its port", 30_000);
    return { origin: `http://127.0.0.1:${port}`, stop: () => server.stop() };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/**
 * Warms up, then drives `url` with autocannon. A non-2xx answer or a connection error fails the run; timeouts
 * (10 s) are counted, not fatal: a saturated Node server starves a few of many connections for seconds.
 */
export async function measure(
  url: string,
  headers: Record<string, string>,
  options: { connections: number; duration: number; warmup: number },
): Promise<Measurement> {
  const result = await autocannon({
    url,
    headers,
    connections: options.connections,
    duration: options.duration,
    ...(options.warmup > 0 ? { warmup: { connections: options.connections, duration: options.warmup } } : {}),
  });
  if (result.errors > result.timeouts || result.non2xx) {
    throw new Error(`${url}: ${result.errors - result.timeouts} connection errors, ${result.non2xx} non-2xx answers`);
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result["2xx"],
    timeouts: result.timeouts,
  };
}
