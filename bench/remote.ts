import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { inArray } from "drizzle-orm";
import { jobs } from "../src/db/schema/index.ts";
import { enqueueDeviceJobs, PRIORITY } from "../src/platform/jobs/queue.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { newKeyPair } from "../src/platform/secrets/sealed-box.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../collector/worker.ts";
import { createTestContext } from "../test/helpers/app.ts";
import { iosScript } from "../test/helpers/collector.ts";
import { eq } from "drizzle-orm";
import { templates } from "../src/db/schema/index.ts";
import { startFakeDevice, type FakeDevice } from "../test/helpers/fake-device.ts";
import { freePort, start, stopGroup } from "../test/helpers/process.ts";

/**
 * `npx tsx bench/remote.ts [--devices 40 --concurrency 10 --uploads 300 --latency-ms 20]`
 *
 * One run, loopback only: the API on a port, the built-in collector (in this process) and one remote collector
 * (`svc collector:remote`, a process of its own), each with --concurrency sessions, each backing up --devices
 * simulated IOS devices of its own zone at the same time; prints devices per minute of each. Then the server's
 * ingest limit: --uploads results (a 20 KB configuration each) posted 16 at a time to /collector-api/v1/results,
 * uploads per second. Then the RSS of the remote collector idle for 10 s.
 */
const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "40" },
    concurrency: { type: "string", default: "10" },
    uploads: { type: "string", default: "300" },
    "latency-ms": { type: "string", default: "20" },
  },
});
const N = Number(values.devices);
const CONCURRENCY = Number(values.concurrency);
const UPLOADS = Number(values.uploads);

const t = await createTestContext({ env: { COLLECTOR_LEASE_SECONDS: "60" } });
const admin = await t.token();
const port = await freePort();
const server = serve({ hostname: "127.0.0.1", port, fetch: t.app.fetch });
const fakes: FakeDevice[] = [];
const stateDir = mkdtempSync(join(tmpdir(), "netkeep-bench-remote-"));
// The test helpers' t.call checks answers against the API description through vitest: plain HTTP here.
const api = async (path: string, method = "GET", body?: unknown) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { apitoken: admin, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await res.json()) as { data: any };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
};
const [ios] = await t.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "cisco-ios"));
const template = ios!.id;
const config = Array.from({ length: 400 }, (_, i) => `interface Gi1/0/${i}\n description port ${i}`);

const zone = (await api("/api/v1/zones", "POST", { name: "bench-site", mode: "remote" })).data;
async function fleet(prefix: string, zoneId: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < N; i++) {
    const name = `${prefix}-${i}`;
    const { prompt, script } = iosScript(name, [`hostname ${name}`, ...config]);
    const fake = await startFakeDevice({
      script,
      initPrompt: prompt,
      auth: { username: "bench", password: "bench-pass" },
      latencyMs: Number(values["latency-ms"]),
    });
    fakes.push(fake);
    const created = await api("/api/v1/devices", "POST", {
      device_name: name,
      device_ip: "127.0.0.1",
      device_vendor: "Cisco",
      device_port_override: fake.port,
      device_template_id: template,
      device_username: "bench",
      device_password: "bench-pass",
      zone_id: zoneId,
    });
    ids.push(created.data.id);
  }
  return ids;
}
const localIds = await fleet("local-dev", 1);
const remoteIds = await fleet("remote-dev", zone.id);

const remote = start(
  process.execPath,
  [
    "--import",
    "tsx",
    "src/cli/main.ts",
    "collector:remote",
    "--server",
    `http://127.0.0.1:${port}`,
    "--allow-http",
    "--enroll",
    zone.enrollment_key,
    "--state-dir",
    stateDir,
    "--concurrency",
    String(CONCURRENCY),
  ],
  { STORAGE_DIR: stateDir, LOG_LEVEL: "warn" },
);
await new Promise((r) => setTimeout(r, 3000));
const worker = startWorker(
  { db: t.db, secrets: t.secrets, clock: { now: () => new Date() }, logger: silentLogger, owner: "bench-local" },
  { ...DEFAULT_WORKER_OPTIONS, concurrency: CONCURRENCY, pollIntervalMs: 100 },
);

async function timeToFinish(ids: number[], started: number): Promise<number> {
  for (;;) {
    const rows = await t.db
      .select({ state: jobs.state, outcome: jobs.outcome })
      .from(jobs)
      .where(inArray(jobs.deviceId, ids));
    if (rows.length === ids.length && rows.every((r) => r.state === "finished")) {
      const bad = rows.filter((r) => r.outcome !== "success");
      if (bad.length) console.log(`  ${bad.length} failed: ${JSON.stringify(bad.slice(0, 3))}`);
      return Date.now() - started;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
const started = Date.now();
await enqueueDeviceJobs(
  t.db,
  { type: "download", deviceIds: [...localIds, ...remoteIds], trigger: "api", priority: PRIORITY.api, maxAttempts: 1 },
  new Date(),
);
const [localMs, remoteMs] = await Promise.all([timeToFinish(localIds, started), timeToFinish(remoteIds, started)]);
const perMinute = (ms: number) => ((N / ms) * 60_000).toFixed(0);
console.log(`devices: ${N} per collector, ${CONCURRENCY} sessions each, same run`);
console.log(`  local collector:  ${perMinute(localMs)} devices/min (${localMs} ms)`);
console.log(`  remote collector: ${perMinute(remoteMs)} devices/min (${remoteMs} ms)`);
await worker.stop(Date.now());

// Idle RSS: the remote collector with nothing to do, long-polling.
await new Promise((r) => setTimeout(r, 10_000));
const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${remote.child.pid}/status`, "utf8"))![1]);
console.log(`remote collector idle RSS: ${(rssKb / 1024).toFixed(0)} MB (node --import tsx, from source)`);
stopGroup(remote, "SIGKILL");

// Ingest: a collector of our own, through the real endpoints: claim jobs, then upload each one's result.
const post = async (path: string, body: unknown, credential?: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(credential ? { "collector-credential": credential } : {}) },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { data: any };
};
const rotated = (await api(`/api/v1/zones/${zone.id}/enrollment-key`, "POST")).data;
const { credential } = (
  await post("/collector-api/v1/enroll", {
    enrollment_key: rotated.enrollment_key,
    name: "bench-ingest",
    public_key: newKeyPair().publicKey,
  })
).data;
const ingestIds: number[] = [];
for (let round = 0; round * remoteIds.length < UPLOADS; round++) ingestIds.push(...remoteIds);
let done = 0;
let uploadsMs = 0;
while (done < UPLOADS) {
  await enqueueDeviceJobs(
    t.db,
    { type: "download", deviceIds: remoteIds, trigger: "api", priority: 0, maxAttempts: 1 },
    new Date(),
  );
  const claimed = (await post("/collector-api/v1/jobs/claim", { wait_ms: 0, max: 100 }, credential)).data as {
    id: number;
    device: { name: string };
  }[];
  const batchStarted = Date.now();
  const queue = claimed.slice(0, UPLOADS - done);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        await post(
          "/collector-api/v1/results",
          {
            upload_key: `bench-${job.id}`,
            job_id: job.id,
            outcome: "collected",
            outputs: [
              ["show running-config", [`hostname ${job.device.name}`, `! run ${job.id}`, ...config].join("\n")],
            ],
            duration_ms: 1,
          },
          credential,
        );
        done++;
      }
    }),
  );
  uploadsMs += Date.now() - batchStarted;
}
console.log(
  `ingest: ${UPLOADS} uploads (each a new version) at ${((UPLOADS / uploadsMs) * 1000).toFixed(0)} uploads/s`,
);

server.close();
for (const f of fakes) await f.close();
await t.close();
rmSync(stateDir, { recursive: true, force: true });
process.exit(0);
