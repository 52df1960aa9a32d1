import { join } from "node:path";
import { parseArgs } from "node:util";
import { runDiscoverJob } from "../collector/discover-job.ts";
import { runDownloadJob } from "../collector/download.ts";
import { DEFAULT_LIMITS } from "../collector/session.ts";
import { claimNextJob } from "../src/platform/jobs/queue.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { createTestContext } from "../test/helpers/app.ts";
import { startFakeDevice } from "../test/helpers/fake-device.ts";
import { findOxidizedFixturesDir, loadSimulation } from "../test/helpers/simulation.ts";

/**
 * `npm run bench:discovery [-- --devices 250 --silent 250 --rate 1000]`
 *
 * Simulated devices of six families (the Oxidized recordings: IOS, VyOS, NX-OS, ASA, Comware, AOS-CX) on loopback
 * addresses 127.1.x.y port 22 (needs root for port 22), two credential sets marked for discovery (the first one
 * wrong, so every device sees a failed try first). Measures, in one process against a temp database:
 * 1. a scan of --silent addresses where nothing listens (ports 22 and 23): addresses per second;
 * 2. a scan of the devices' addresses, adopting each: addresses per second, and the time per device;
 * 3. backing the adopted devices up once (16 at a time, as a collector's default concurrency): the same figures.
 * Connections are bounded at --rate per second.
 */

const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "250" },
    silent: { type: "string", default: "250" },
    rate: { type: "string", default: "1000" },
  },
});
const DEVICES = Number(values.devices);
const SILENT = Number(values.silent);
const RATE = Number(values.rate);
const RECORDED = [
  "ios#C9200L-24P-4G_17.09.04a",
  "vyos#Supermicro_1.4.3",
  "nxos#C93180YC-FX3J_10.4.5",
  "asa#5512_9.12-4-67_single-context",
  "h3c#5130-48G_7.1.070",
  "aoscx#6100-48G_PL.10.10.1090",
];
const AUTH = { username: "oxidized", password: "replay-pass" };

const dir = findOxidizedFixturesDir();
if (!dir) throw new Error("the Oxidized recordings are missing: ../shared/fixtures/oxidized");
const simulations = RECORDED.map((name) => loadSimulation(join(dir, `${name}#simulation.yaml`)));
const addressOf = (i: number) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;

const t = await createTestContext();
const admin = await t.token();
/** A request straight to the app (the tests' t.call checks answers against the API contract through vitest). */
async function call(path: string, init: { method?: string; body?: unknown }) {
  const res = await t.call(path, { ...init, token: admin, offContract: "a benchmark outside vitest" });
  return res as { status: number; body: { data: { id: number } } };
}
const devices = await Promise.all(
  Array.from({ length: DEVICES }, (_, i) =>
    startFakeDevice({ simulation: simulations[i % simulations.length]!, auth: AUTH, host: addressOf(i), port: 22 }),
  ),
);
for (const [name, login] of [
  ["nobody", { cred_username: "nobody", cred_password: "wrong-pass" }],
  ["oxidized", { cred_username: AUTH.username, cred_password: AUTH.password }],
] as const)
  await call("/api/v1/device-credentials", {
    method: "POST",
    body: { cred_name: name, ...login, cred_discovery: true },
  });

const deps = {
  db: t.db,
  secrets: t.secrets,
  clock: { now: () => new Date() },
  logger: silentLogger,
  owner: "bench",
  limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 10_000, optionalIdleTimeoutMs: 1_000 },
  connectTimeoutMs: 5_000,
};

async function scan(name: string, targets: string[], adopt: boolean) {
  const preset = await call("/api/v1/discovery/presets", {
    method: "POST",
    body: { name, targets, ports: [22, 23], adopt, connects_per_second: RATE, max_connects: 100_000 },
  });
  await call(`/api/v1/discovery/presets/${preset.body.data.id}/run`, { method: "POST" });
  const job = (await claimNextJob(t.db, "bench", new Date(), 3_600_000))!;
  const started = performance.now();
  await runDiscoverJob(deps, job, new AbortController().signal);
  return (performance.now() - started) / 1000;
}

const lastOf = (i: number) => addressOf(i - 1);
const silentSeconds = SILENT ? await scan("silent", [`127.2.0.1-127.2.0.${Math.min(SILENT, 254)}`], false) : 0;
const discoverSeconds = await scan(
  "devices",
  [`127.1.0.1-${lastOf(Math.min(DEVICES, 250))}`, ...(DEVICES > 250 ? [`127.1.1.1-${lastOf(DEVICES)}`] : [])],
  true,
);

// Backing the adopted devices up once, 16 sessions at a time.
const backupStarted = performance.now();
let failed = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    for (;;) {
      const job = await claimNextJob(t.db, "bench", new Date(), 3_600_000);
      if (!job) return;
      const end = await runDownloadJob(deps, job, new AbortController().signal);
      if (end && end.outcome !== "success" && end.outcome !== "unchanged") failed++;
    }
  }),
);
const backupSeconds = (performance.now() - backupStarted) / 1000;

const [adopted] = (await t.client.execute("select count(*) as n from devices")).rows;
console.log(
  JSON.stringify(
    {
      devices: DEVICES,
      silent_addresses: Math.min(SILENT, 254),
      silent_scan_seconds: +silentSeconds.toFixed(2),
      silent_addresses_per_second: SILENT ? +(Math.min(SILENT, 254) / silentSeconds).toFixed(1) : null,
      discover_seconds: +discoverSeconds.toFixed(2),
      discovered_addresses_per_second: +(DEVICES / discoverSeconds).toFixed(1),
      adopted: Number(adopted?.n ?? 0),
      backup_seconds: +backupSeconds.toFixed(2),
      backed_up_per_second: +(DEVICES / backupSeconds).toFixed(1),
      backups_failed: failed,
      discover_vs_backup: +(discoverSeconds / backupSeconds).toFixed(2),
    },
    null,
    2,
  ),
);
await Promise.all(devices.map((d) => d.close()));
await t.close();
