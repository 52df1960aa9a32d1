import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { count, eq, notInArray, sql } from "drizzle-orm";
import { openSecretBox } from "../src/runtime/bootstrap.ts";
import { systemClock } from "../src/kernel/clock.ts";
import { openDatabase, type Db } from "../src/db/client.ts";
import { migrateDatabase } from "../src/runtime/seed.ts";
import { configs, jobs, templates } from "../src/db/schema/index.ts";
import { enqueueDeviceJob, PRIORITY } from "../src/platform/jobs/queue.ts";
import { createDevices } from "../src/modules/devices/service.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { COLLECTOR_NODE_ARGS } from "../src/runtime/collector-process.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { startChild } from "./children.ts";
import { hostnameOf } from "./ios-config.ts";
import { sampleProcess, type ProcSample } from "./proc-stats.ts";
import { benchLogin } from "./sim-devices.ts";

/**
 * One run of the real collector process (dist/collector.js, as `npm run collector` starts it) against the
 * simulated devices: a fresh temp database seeded through the project's own write paths (migrations and
 * built-in templates, devices with their own credentials on the cisco-ios template, one queued download job
 * each), the collector started with COLLECTOR_CONCURRENCY, and the jobs table and /proc watched until every
 * job has finished.
 */

/**
 * The production bundle (`npm run collector`), built by the caller (bench/service.ts buildBundles): from
 * source, tsx's loader and the store thread's own copy of it added some 70 MB to the collector's memory.
 */
const COLLECTOR_ENTRY = fileURLToPath(new URL("../dist/collector.js", import.meta.url));
const POLL_MS = 200;

/** What the collector said that matters when a run fails: its warnings and errors, not the line per finished job. */
const complaints = (output: string) =>
  output
    .split("\n")
    .filter((l) => l.trim() && !/"level":"info"/.test(l))
    .slice(-20)
    .join("\n") || "(no warnings or errors logged)";

export type CollectorRun = {
  devices: number;
  concurrency: number;
  /** First job claimed to last job finished, from the jobs table. */
  elapsedMs: number;
  /** The most jobs the table showed running at once: the sessions the collector really had open. */
  peakRunning: number;
  peakRssKb: number;
  /** After start-up, before the first job: what the work itself adds is peakRssKb minus this. */
  idleRssKb: number;
  /** CPU from "collector started" to the last job finished (start-up and tsx's compile left out). */
  cpuSeconds: number;
  outcomes: Record<string, number>;
  failures: string[];
  storedConfigs: number;
  avgConfigBytes: number;
  /** Each job's duration_ms (claim to stored), as the collector recorded it. */
  jobMs: number[];
  /** From the last job finished until the collector had indexed every version the run stored, and the CPU it took. */
  indexCatchUpMs: number;
  indexCpuSeconds: number;
};

/** A fresh database holding the devices (one per port) and a queued download for each. */
async function seed(dir: string, ports: number[]): Promise<{ env: Record<string, string>; db: Db; close(): void }> {
  mkdirSync(dir, { recursive: true });
  const appKey = generateAppKey();
  const env = {
    STORAGE_DIR: dir,
    DATABASE_URL: `file:${join(dir, "netkeep.db")}`,
    DATABASE_AUTH_TOKEN: "",
    APP_KEY: appKey,
  };
  const { db, client, location } = await openDatabase(env.DATABASE_URL);
  await migrateDatabase(location, db, systemClock, loadBuiltinTemplates());
  const [template] = await db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "cisco-ios"));
  if (!template) throw new Error("the built-in cisco-ios template was not seeded");
  const secrets = await openSecretBox(appKey);
  const ctx = {
    db,
    secrets,
    actor: { system: "bench collect" },
    scope: { all: true as const },
    abilities: "all" as const,
    now: new Date(),
  };
  const ids: number[] = [];
  for (let start = 0; start < ports.length; start += 500) {
    const inputs = ports.slice(start, start + 500).map((port, k) => {
      const login = benchLogin(start + k);
      return {
        device_name: hostnameOf(start + k),
        device_ip: "127.0.0.1",
        device_port_override: port,
        device_template_id: template.id,
        device_vendor: "Cisco",
        device_model: "WS-C3850-48P",
        device_username: login.username,
        device_password: login.password,
      };
    });
    ids.push(...(await createDevices(ctx, inputs, true)).map((d) => d.id));
  }
  // One attempt each: a failure is reported, not retried after a backoff that would stall the run.
  await db.transaction(async (tx) => {
    for (const deviceId of ids)
      await enqueueDeviceJob(
        tx,
        { type: "download", deviceId, trigger: "api", priority: PRIORITY.api, maxAttempts: 1 },
        new Date(),
      );
  });
  return { env, db, close: () => client.close() };
}

export async function runCollector(options: {
  dir: string;
  ports: number[];
  concurrency: number;
  timeoutMs: number;
  profileDir?: string;
}): Promise<CollectorRun> {
  const { dir, ports, concurrency } = options;
  const seeded = await seed(dir, ports);
  const { db } = seeded;
  const collector = startChild("the collector", COLLECTOR_ENTRY, [], {
    env: { ...seeded.env, COLLECTOR_CONCURRENCY: String(concurrency) },
    nodeArgs: [
      ...COLLECTOR_NODE_ARGS,
      ...(options.profileDir ? ["--cpu-prof", "--cpu-prof-dir", options.profileDir] : []),
    ],
  });
  try {
    await collector.waitForOutput("collector started", 60_000);
    const atStart = sampleProcess(collector.pid)!;
    let last: ProcSample = atStart;
    let peakRunning = 0;
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const states = await db.select({ state: jobs.state, n: count() }).from(jobs).groupBy(jobs.state);
      const n = (state: string) => states.find((s) => s.state === state)?.n ?? 0;
      peakRunning = Math.max(peakRunning, n("running"));
      last = sampleProcess(collector.pid) ?? last;
      if (n("finished") === ports.length) break;
      if (collector.child.exitCode !== null)
        throw new Error(
          `the collector exited (${collector.child.exitCode}) with ${n("finished")} of ${ports.length} jobs finished:\n${complaints(collector.output())}`,
        );
      if (Date.now() > deadline) {
        throw new Error(
          `the collector finished ${n("finished")} of ${ports.length} jobs in ${options.timeoutMs / 1000} s (${n("running")} running, ${n("queued")} queued):\n${complaints(collector.output())}`,
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    // The collector indexes what it stored in its spare time (collector/indexer.ts): wait for that too.
    const jobsDone = performance.now();
    for (;;) {
      const [queue] = await db.all<{ n: number }>(sql`select count(*) as n from config_search_pending`);
      if (!Number(queue!.n)) break;
      if (Date.now() > deadline) throw new Error(`the collector left ${queue!.n} versions unindexed`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const indexed = sampleProcess(collector.pid) ?? last;
    const indexCatchUpMs = performance.now() - jobsDone;
    const [window] = await db
      .select({
        first: sql<number>`min(${jobs.startedAt})`.mapWith(Number),
        last: sql<number>`max(${jobs.finishedAt})`.mapWith(Number),
      })
      .from(jobs);
    const outcomes = Object.fromEntries(
      (await db.select({ outcome: jobs.outcome, n: count() }).from(jobs).groupBy(jobs.outcome)).map((r) => [
        r.outcome ?? "none",
        r.n,
      ]),
    );
    const failed = await db
      .select({ deviceId: jobs.deviceId, outcome: jobs.outcome, message: jobs.message, result: jobs.result })
      .from(jobs)
      .where(notInArray(jobs.outcome, ["success", "unchanged"]))
      .limit(5);
    const durations = await db
      .select({ ms: sql<number>`json_extract(${jobs.result}, '$.duration_ms')`.mapWith(Number) })
      .from(jobs);
    const [stored] = await db
      .select({ n: count(), avg: sql<number>`coalesce(avg(${configs.size}), 0)`.mapWith(Number) })
      .from(configs)
      .where(eq(configs.command, "show running-config"));
    return {
      devices: ports.length,
      concurrency,
      elapsedMs: window!.last - window!.first,
      peakRunning,
      peakRssKb: last.peakRssKb,
      idleRssKb: atStart.rssKb,
      cpuSeconds: last.cpuSeconds - atStart.cpuSeconds,
      outcomes,
      failures: failed.map(
        (f) => `device ${f.deviceId}: ${f.outcome}: ${f.message} ${JSON.stringify(f.result?.last_lines ?? "")}`,
      ),
      storedConfigs: stored!.n,
      avgConfigBytes: stored!.avg,
      jobMs: durations.map((d) => d.ms),
      indexCatchUpMs,
      indexCpuSeconds: indexed.cpuSeconds - last.cpuSeconds,
    };
  } finally {
    // A clean exit (SIGTERM) lets --cpu-prof write its profile.
    await collector.stop();
    seeded.close();
  }
}
