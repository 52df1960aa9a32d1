import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { eq } from "drizzle-orm";
import { ABILITIES } from "../src/auth/abilities.ts";
import { issueToken } from "../src/auth/tokens.ts";
import { findUserByName } from "../src/auth/users.ts";
import { prepareDatabase } from "../src/bootstrap.ts";
import { systemClock } from "../src/clock.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { templates } from "../src/db/schema/index.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { COLLECTOR_NODE_ARGS } from "../src/runtime/collector-process.ts";
import { generateAppKey } from "../src/secrets/box.ts";
import { startChild } from "./children.ts";
import { hostnameOf } from "./ios-config.ts";
import { childOf, sampleProcess, type ProcSample } from "./proc-stats.ts";
import { benchLogin } from "./sim-devices.ts";

/**
 * The end-to-end phase of bench/deploy.ts: the service as `npm start` runs it (src/main.ts, which starts the
 * collector beside the API) on a fresh storage directory, driven only through its API as a user would: the
 * devices on the cisco-ios template (one bulk create), a snippet, `POST /snippets/{id}/deploy` to all of them,
 * then `GET /snippet-deployments/{id}` polled until it finishes. The time is from the deploy call to the
 * deployment's finished_at (its last device's push recorded), so neither the set-up nor the polling counts.
 */

const MAIN_ENTRY = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const COLLECTOR_ENTRY = fileURLToPath(new URL("../collector/main.ts", import.meta.url));
const POLL_MS = 250;

export type ServiceDeployRun = {
  devices: number;
  /** The deploy call to the deployment's finished_at. */
  elapsedMs: number;
  deviceCounts: Record<string, number>;
  failures: string[];
  /** Each device's push job as the collector recorded it (download before, push, download after). */
  jobMs: number[];
  /** CPU of the API and collector processes over the deployment. */
  apiCpuSeconds: number;
  collectorCpuSeconds: number;
  collectorPeakRssKb: number;
};

/** A port nothing listens on now: the service takes PORT from its environment and 0 is not accepted there. */
const freePort = () => new Promise<number>((resolve, reject) => {
  const server = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    server.close(() => resolve(port));
  });
});

export async function runServiceDeploy(options: { dir: string; ports: number[]; lines: string[]; concurrency: number; timeoutMs: number; profileDir?: string }): Promise<ServiceDeployRun> {
  const { dir, ports } = options;
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  // The service inherits the environment, so an empty DATABASE_URL keeps a developer's own database out of it.
  const env = {
    STORAGE_DIR: dir, DATABASE_URL: "", DATABASE_AUTH_TOKEN: "", APP_KEY: generateAppKey(), PORT: String(port), HOST: "127.0.0.1",
    // Node refuses --cpu-prof in NODE_OPTIONS, so to profile both, the API runs without its collector and the
    // collector beside it as `npm run collector` starts one (the split deployment docs/ describes).
    COLLECTOR: options.profileDir ? "off" : "on", COLLECTOR_CONCURRENCY: String(options.concurrency),
  };
  const profiling = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
  // The database is prepared (as the first start would) only to issue an API token: a user would create one.
  const config = loadConfig(env);
  const database = await openDatabase(config.databaseUrl);
  let token: string;
  let templateId: number;
  try {
    await prepareDatabase(database, config, systemClock, loadBuiltinTemplates());
    const admin = await findUserByName(database.db, "admin");
    token = (await issueToken(database.db, { userId: admin!.id, name: "bench", abilities: [...ABILITIES], expiresAt: null }, new Date())).value;
    const [template] = await database.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "cisco-ios"));
    templateId = template!.id;
  } finally {
    database.client.close();
  }

  const origin = `http://127.0.0.1:${port}`;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${origin}/api/v1${path}`, {
      method, headers: { apitoken: token, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
    return (JSON.parse(text) as { data: T }).data;
  };

  const service = startChild("the service", MAIN_ENTRY, [], { env, nodeArgs: profiling });
  const collector = options.profileDir ? startChild("the collector", COLLECTOR_ENTRY, [], { env, nodeArgs: [...COLLECTOR_NODE_ARGS, ...profiling] }) : undefined;
  try {
    await service.waitForOutput("netkeep API listening", 60_000);
    await (collector ?? service).waitForOutput("collector started", 60_000);
    const collectorPid = collector?.pid ?? childOf(service.pid, "collector/main.ts");
    if (!collectorPid) throw new Error("the service started no collector process");

    const created = await api<{ id: number }[]>("POST", "/devices/bulk", {
      devices: ports.map((p, i) => ({
        device_name: hostnameOf(i), device_ip: "127.0.0.1", device_port_override: p, device_template_id: templateId,
        device_vendor: "Cisco", device_model: "WS-C3850-48P", ...(({ username, password }) => ({ device_username: username, device_password: password }))(benchLogin(i)),
      })),
    });
    const snippet = await api<{ id: number }>("POST", "/snippets", { name: "bench deploy", content: options.lines.join("\n") });

    const apiBefore = sampleProcess(service.pid)!;
    const collectorBefore = sampleProcess(collectorPid)!;
    let collectorLast: ProcSample = collectorBefore;
    const deployedAt = Date.now();
    const deployment = await api<{ id: number }>("POST", `/snippets/${snippet.id}/deploy`, {
      devices: created.map((d) => d.id), confirm_device_count: created.length, concurrency: options.concurrency,
    });
    type DeploymentView = { state: string; finished_at: string | null; device_counts: Record<string, number> };
    let view: DeploymentView;
    for (;;) {
      view = await api<DeploymentView>("GET", `/snippet-deployments/${deployment.id}`);
      collectorLast = sampleProcess(collectorPid) ?? collectorLast;
      if (view.state === "finished") break;
      if (Date.now() - deployedAt > options.timeoutMs) throw new Error(`the deployment did not finish in ${options.timeoutMs / 1000} s: ${JSON.stringify(view.device_counts)}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const apiAfter = sampleProcess(service.pid) ?? apiBefore;

    type DeviceView = { device_name: string; status: string; message: string | null; result: { duration_ms?: number } | null };
    const rows: DeviceView[] = [];
    for (let page = 1; rows.length < created.length; page++) {
      const batch = await api<DeviceView[]>("GET", `/snippet-deployments/${deployment.id}/devices?per_page=100&page=${page}&fields=device_name,status,message,result`);
      if (!batch.length) break;
      rows.push(...batch);
    }
    return {
      devices: created.length,
      elapsedMs: Date.parse(view.finished_at!) - deployedAt,
      deviceCounts: Object.fromEntries(Object.entries(view.device_counts).filter(([, n]) => n)),
      failures: rows.filter((r) => r.status !== "success").slice(0, 5).map((r) => `${r.device_name}: ${r.status}: ${r.message}`),
      jobMs: rows.flatMap((r) => (typeof r.result?.duration_ms === "number" ? [r.result.duration_ms] : [])),
      apiCpuSeconds: apiAfter.cpuSeconds - apiBefore.cpuSeconds,
      collectorCpuSeconds: collectorLast.cpuSeconds - collectorBefore.cpuSeconds,
      collectorPeakRssKb: collectorLast.peakRssKb,
    };
  } finally {
    await collector?.stop();
    await service.stop();
  }
}
