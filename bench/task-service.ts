import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ABILITIES } from "../src/auth/abilities.ts";
import { COLLECTOR_NODE_ARGS } from "../src/runtime/collector-process.ts";
import { generateAppKey } from "../src/secrets/box.ts";
import { freePort } from "../test/helpers/process.ts";
import { startChild, type BenchChild } from "./children.ts";
import { hostnameOf } from "./ios-config.ts";
import { childOf, sampleProcess, type ProcSample } from "./proc-stats.ts";
import { benchLogin } from "./sim-devices.ts";

/**
 * The service of bench/task.ts as a user runs it: `npm start` (node dist/main.js, which starts its collector as
 * a child) on a fresh storage directory and its own port, an admin token issued with `svc token:create` as the
 * README says, the devices created with one bulk call on the built-in cisco-ios template, a download_all task,
 * and each run started with `POST /tasks/{id}/run` and polled until it has a finished_at.
 */

const root = fileURLToPath(new URL("..", import.meta.url));
const MAIN_BUNDLE = `${root}dist/main.js`;
const COLLECTOR_BUNDLE = `${root}dist/collector.js`;
const SVC = `${root}bin/svc.js`;
/** A user's dashboard polling a run; the poll's own CPU is counted in the API's. */
const POLL_MS = 500;

/** The bundles are the checkout's code: built now (esbuild, about a second), never a stale dist/ from before. */
export function buildBundles(): void {
  execFileSync(process.execPath, [`${root}scripts/build.js`], { cwd: root, stdio: "inherit" });
  if (!existsSync(MAIN_BUNDLE)) throw new Error(`the build wrote no ${MAIN_BUNDLE}`);
}

export type TaskRunResult = {
  devices: number;
  /** The run request to the run's finished_at. */
  elapsedMs: number;
  /** The run request to the first job's started_at. */
  firstStartMs: number;
  counts: Record<string, number>;
  failures: string[];
  /** Each device's job as the collector recorded it (duration_ms: session and storing). */
  jobMs: number[];
  apiCpuSeconds: number;
  collectorCpuSeconds: number;
  collectorPeakRssKb: number;
};

export type TaskService = {
  apiPid: number;
  collectorPid: number;
  /** One run of the download_all task over every device, timed. */
  run(timeoutMs: number): Promise<TaskRunResult>;
  /**
   * Waits until the collector has been idle (under 5% of a core) for a second: after a run it indexes what it
   * stored for search and checks compliance, in its spare time, as it would before the next night's run.
   * Resolves with how long that took and the CPU it cost.
   */
  settle(timeoutMs: number): Promise<{ ms: number; cpuSeconds: number }>;
  stop(): Promise<void>;
};

export async function startTaskService(options: { dir: string; ports: number[]; concurrency: number; profileDir?: string }): Promise<TaskService> {
  const { dir, ports } = options;
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  // The service inherits the environment, so an empty DATABASE_URL keeps a developer's own database out of it.
  const env = {
    STORAGE_DIR: dir, DATABASE_URL: "", DATABASE_AUTH_TOKEN: "", APP_KEY: generateAppKey(), PORT: String(port), HOST: "127.0.0.1",
    // Node refuses --cpu-prof in NODE_OPTIONS, so to profile both, the API runs without its collector and the
    // collector beside it as `npm run collector` starts one (the split deployment docs/ describes).
    COLLECTOR: options.profileDir ? "off" : "on", COLLECTOR_CONCURRENCY: String(options.concurrency),
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
    const collector = options.profileDir ? startChild("the collector", COLLECTOR_BUNDLE, [], { env, nodeArgs: [...COLLECTOR_NODE_ARGS, ...profiling] }) : undefined;
    if (collector) children.push(collector);
    await (collector ?? service).waitForOutput("collector started", 60_000);
    const collectorPid = collector?.pid ?? childOf(service.pid, "dist/collector.js");
    if (!collectorPid) throw new Error("the service started no collector process");

    // As the README: the first start created `admin`; `svc token:create` prints the token on its last line.
    const printed = execFileSync(process.execPath, [SVC, "token:create", "--user", "admin", "--name", "bench", "--abilities", ABILITIES.join(",")], {
      env: { ...process.env, ...env }, encoding: "utf8",
    });
    const token = printed.trim().split("\n").at(-1)!.trim();

    const origin = `http://127.0.0.1:${port}`;
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${origin}/api/v1${path}`, {
        method, headers: { apitoken: token, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
      return (JSON.parse(text) as { data: T }).data;
    };

    const [template] = await api<{ id: number }[]>("GET", "/templates?filter[name]=cisco-ios&filter[builtin]=true");
    if (!template) throw new Error("the service has no built-in cisco-ios template");
    await api("POST", "/devices/bulk", {
      devices: ports.map((p, i) => ({
        device_name: hostnameOf(i), device_ip: "127.0.0.1", device_port_override: p, device_template_id: template.id,
        device_vendor: "Cisco", device_model: "WS-C3850-48P", ...(({ username, password }) => ({ device_username: username, device_password: password }))(benchLogin(i)),
      })),
    });
    const task = await api<{ id: number }>("POST", "/tasks", { task_name: "bench backup", task_type: "download_all", task_cron: "0 3 * * *", is_paused: true });

    type RunView = { id: number; finished_at: string | null; counts: Record<string, number> };
    type ItemView = { device_name: string; status: string; error: string | null; started_at: string | null; duration_ms: number | null };
    const run = async (timeoutMs: number): Promise<TaskRunResult> => {
      const apiBefore = sampleProcess(service.pid)!;
      const collectorBefore = sampleProcess(collectorPid)!;
      let collectorLast: ProcSample = collectorBefore;
      const requestedAt = Date.now();
      let view = await api<RunView>("POST", `/tasks/${task.id}/run`);
      while (!view.finished_at) {
        if (Date.now() - requestedAt > timeoutMs) throw new Error(`the run did not finish in ${timeoutMs / 1000} s: ${JSON.stringify(view.counts)}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
        collectorLast = sampleProcess(collectorPid) ?? collectorLast;
        view = await api<RunView>("GET", `/task-runs/${view.id}`);
      }
      const apiAfter = sampleProcess(service.pid) ?? apiBefore;
      collectorLast = sampleProcess(collectorPid) ?? collectorLast;
      const items: ItemView[] = [];
      for (let page = 1; ; page++) {
        const batch = await api<ItemView[]>("GET", `/task-runs/${view.id}/devices?per_page=500&page=${page}&fields=device_name,status,error,started_at,duration_ms`);
        items.push(...batch);
        if (batch.length < 500) break;
      }
      const starts = items.flatMap((i) => (i.started_at ? [Date.parse(i.started_at)] : []));
      return {
        devices: items.length,
        elapsedMs: Date.parse(view.finished_at) - requestedAt,
        firstStartMs: Math.min(...starts) - requestedAt,
        counts: Object.fromEntries(Object.entries(view.counts).filter(([k, n]) => n && k !== "total")),
        failures: items.filter((i) => i.status !== "succeeded" && i.status !== "unchanged").slice(0, 5).map((i) => `${i.device_name}: ${i.status}: ${i.error}`),
        jobMs: items.flatMap((i) => (typeof i.duration_ms === "number" ? [i.duration_ms] : [])),
        apiCpuSeconds: apiAfter.cpuSeconds - apiBefore.cpuSeconds,
        collectorCpuSeconds: collectorLast.cpuSeconds - collectorBefore.cpuSeconds,
        collectorPeakRssKb: collectorLast.peakRssKb,
      };
    };
    const settle = async (timeoutMs: number) => {
      const began = performance.now();
      const first = sampleProcess(collectorPid)!.cpuSeconds;
      let last = first;
      for (let quiet = 0; quiet < 4 && performance.now() - began < timeoutMs; ) {
        await new Promise((r) => setTimeout(r, 250));
        const now = sampleProcess(collectorPid)?.cpuSeconds ?? last;
        quiet = now - last < 0.0125 ? quiet + 1 : 0;
        last = now;
      }
      return { ms: performance.now() - began, cpuSeconds: last - first };
    };
    return { apiPid: service.pid, collectorPid, run, settle, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
