import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ABILITIES } from "../src/platform/auth/abilities.ts";
import { COLLECTOR_NODE_ARGS } from "../src/runtime/collector-process.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { freePort } from "../test/helpers/process.ts";
import { startChild, type BenchChild } from "./children.ts";
import { hostnameOf } from "./ios-config.ts";
import { childOf } from "./proc-stats.ts";
import { benchLogin } from "./sim-devices.ts";

/**
 * The service as a user runs it, for the benchmarks that drive it only through its API (bench/task.ts,
 * bench/deploy.ts): `npm start` (node dist/main.js, which starts its collector as a child) on a fresh storage
 * directory and its own port, an admin token issued with `svc token:create` as the README says, and the
 * simulated devices created with one bulk call on the built-in cisco-ios template.
 */

const root = fileURLToPath(new URL("..", import.meta.url));
const MAIN_BUNDLE = `${root}dist/main.js`;
const COLLECTOR_BUNDLE = `${root}dist/collector.js`;
const SVC = `${root}bin/svc.js`;

/** The bundles are the checkout's code: built now (esbuild, about a second), never a stale dist/ from before. */
export function buildBundles(): void {
  execFileSync(process.execPath, [`${root}scripts/build.js`], { cwd: root, stdio: "inherit" });
  if (!existsSync(MAIN_BUNDLE)) throw new Error(`the build wrote no ${MAIN_BUNDLE}`);
}

export type BenchService = {
  apiPid: number;
  /** The API's origin and the headers that carry the token, for a request timed as a client sees it. */
  origin: string;
  headers: Record<string, string>;
  collectorPid: number;
  /** A request to /api/v1 with the admin token; answers the envelope's data, throws on any non-2xx. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** One device per simulated device port, on the built-in cisco-ios template with that device's login. */
  createDevices(ports: readonly number[]): Promise<{ id: number }[]>;
  stop(): Promise<void>;
};

/**
 * Starts the built service (call buildBundles first) with `concurrency` sessions; `profileDir` profiles both
 * processes. `dir` may hold a database already (bench/configs.ts): then `appKey` is the key it was written with
 * and `user` the admin user the token is issued to.
 */
export async function startBenchService(options: {
  dir: string;
  concurrency: number;
  profileDir?: string;
  appKey?: string;
  user?: string;
}): Promise<BenchService> {
  mkdirSync(options.dir, { recursive: true });
  const port = await freePort();
  // The service inherits the environment, so an empty DATABASE_URL keeps a developer's own database out of it.
  const env = {
    STORAGE_DIR: options.dir,
    DATABASE_URL: "",
    DATABASE_AUTH_TOKEN: "",
    APP_KEY: options.appKey ?? generateAppKey(),
    PORT: String(port),
    HOST: "127.0.0.1",
    // Node refuses --cpu-prof in NODE_OPTIONS, so to profile both, the API runs without its collector and the
    // collector beside it as `npm run collector` starts one (the split deployment docs/ describes).
    COLLECTOR: options.profileDir ? "off" : "on",
    COLLECTOR_CONCURRENCY: String(options.concurrency),
    // A run of a thousand devices is a few hundred requests' worth of polling; the default limit is per minute.
    RATE_LIMIT_PER_MINUTE: "100000",
  };
  const profiling = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
  const children: BenchChild[] = [];
  const stop = async () => {
    for (const c of children.reverse()) await c.stop();
  };
  try {
    const service = startChild("the service", MAIN_BUNDLE, [], { env, nodeArgs: profiling });
    children.push(service);
    await service.waitForOutput("netkeep API listening", 60_000);
    const collector = options.profileDir
      ? startChild("the collector", COLLECTOR_BUNDLE, [], { env, nodeArgs: [...COLLECTOR_NODE_ARGS, ...profiling] })
      : undefined;
    if (collector) children.push(collector);
    // A large estate's collector loads its line store first: 42 s on a loaded machine at 10,000 devices.
    await (collector ?? service).waitForOutput("collector started", 300_000);
    const collectorPid = collector?.pid ?? childOf(service.pid, "dist/collector.js");
    if (!collectorPid) throw new Error("the service started no collector process");

    // As the README: the first start created `admin`; `svc token:create` prints the token on its last line.
    const printed = execFileSync(
      process.execPath,
      [SVC, "token:create", "--user", options.user ?? "admin", "--name", "bench", "--abilities", ABILITIES.join(",")],
      {
        env: { ...process.env, ...env },
        encoding: "utf8",
      },
    );
    const token = printed.trim().split("\n").at(-1)!.trim();

    const origin = `http://127.0.0.1:${port}`;
    const headers = { apitoken: token };
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${origin}/api/v1${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
      return (JSON.parse(text) as { data: T }).data;
    };
    const createDevices = async (ports: readonly number[]) => {
      const [template] = await api<{ id: number }[]>("GET", "/templates?filter[name]=cisco-ios&filter[builtin]=true");
      if (!template) throw new Error("the service has no built-in cisco-ios template");
      const created: { id: number }[] = [];
      // POST /devices/bulk takes at most 1,000 devices a request.
      for (let from = 0; from < ports.length; from += 1000) {
        created.push(
          ...(await api<{ id: number }[]>("POST", "/devices/bulk", {
            devices: ports.slice(from, from + 1000).map((p, k) => ({
              device_name: hostnameOf(from + k),
              device_ip: "127.0.0.1",
              device_port_override: p,
              device_template_id: template.id,
              device_vendor: "Cisco",
              device_model: "WS-C3850-48P",
              ...(({ username, password }) => ({ device_username: username, device_password: password }))(
                benchLogin(from + k),
              ),
            })),
          })),
        );
      }
      return created;
    };
    return { apiPid: service.pid, origin, headers, collectorPid, api, createDevices, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
