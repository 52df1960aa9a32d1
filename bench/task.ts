import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { startChild, stopAllChildren, type BenchChild } from "./children.ts";
import { sampleProcess } from "./proc-stats.ts";
import { summarizeProfiles } from "./profile.ts";
import { benchLogin } from "./sim-devices.ts";
import type { BaselinePlan, BaselineResult } from "./ssh-baseline.ts";
import { buildBundles } from "./service.ts";
import { startTaskService, type TaskRunResult } from "./task-service.ts";

/**
 * `npm run bench:task [-- --devices 1000 --latency-ms 50 --config-kb 100 --concurrency 50 --profile]`
 *
 * The product path of a nightly backup: simulated Cisco IOS devices on loopback (bench/device-server.ts, one
 * process, one port and login each, every answer after --latency-ms, a --config-kb running config), and against
 * them, one after another:
 *
 * 1. bare ssh2 clients (bench/ssh-baseline.ts) doing the same exchange at --concurrency, storing nothing;
 * 2. the service as `npm start` runs it (built first: node dist/main.js and the collector it starts, with
 *    COLLECTOR_CONCURRENCY = --concurrency; bench/task-service.ts), the devices and a download_all task created
 *    through the API, `POST /tasks/{id}/run`, timed from the request to the run's finished_at: every download a
 *    first version;
 * 3. bare ssh2 again, then the same task run again: every configuration unchanged.
 *
 * After each run the collector is left to finish what it does in its spare time (indexing for search), as it
 * would before the next night's run, so that it does not run under the next phase.
 *
 * Prints devices per minute of each, the ratios, CPU seconds of the API, the collector and the device process,
 * job p50/p90, and the delay from the run request to the first job's start. Exits 1 when a device fails or a run
 * is below 0.9 of the bare rate next to it. `--profile` runs the collector beside the API (COLLECTOR=off, as a
 * split deployment does, so the API cannot wake it: the first job waits for its poll) so that both write CPU
 * profiles, profiles the bare clients too, and prints their summaries (the service's: both runs together).
 */
const TARGET_RATIO = 0.9;

const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "1000" },
    "latency-ms": { type: "string", default: "50" },
    "config-kb": { type: "string", default: "100" },
    concurrency: { type: "string", default: "50" },
    "timeout-s": { type: "string", default: "900" },
    profile: { type: "boolean", default: false },
  },
});
const flag = (name: keyof typeof values, min: number) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number >= ${min}, got '${values[name]}'`);
  return n;
};
const flags = {
  devices: flag("devices", 1),
  latencyMs: flag("latency-ms", 0),
  configKb: flag("config-kb", 1),
  concurrency: flag("concurrency", 1),
  timeoutMs: flag("timeout-s", 10) * 1000,
};

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const perMinute = (devices: number, ms: number) => (devices * 60_000) / ms;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

type Row = {
  name: string;
  devices: number;
  ms: number;
  sessionMs: number[];
  cpu: string;
  deviceCpuSeconds: number;
  firstStartMs?: number;
  load: string;
};

async function runBaseline(ports: number[], devices: BenchChild, profileDir?: string): Promise<Row> {
  const parsed = parseTemplate(loadBuiltinTemplates().find((t) => t.key === "cisco-ios")!.code);
  if (!parsed.ok) throw new Error("the built-in cisco-ios template does not parse");
  const t = parsed.template;
  const plan: BaselinePlan = {
    targets: ports.map((port, i) => ({ port, ...benchLogin(i) })),
    concurrency: flags.concurrency,
    prompt: t.prompt!,
    lineEnding: t.line_ending,
    sessions: [[...t.setup, ...t.commands]],
    teardown: t.teardown,
    configCommand: t.config_command ?? t.commands[0]!,
    timeoutMs: 60_000,
  };
  const client = startChild("the ssh2 baseline", here("./ssh-baseline.ts"), [], {
    nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  });
  try {
    await client.nextMessage<"ready">("ready", 60_000);
    const before = sampleProcess(client.pid)!;
    const deviceBefore = sampleProcess(devices.pid)!.cpuSeconds;
    client.child.send(plan);
    const r = await client.nextMessage<BaselineResult>("its result", flags.timeoutMs);
    const after = sampleProcess(client.pid) ?? before;
    if (r.failures.length)
      problems.push(`bare ssh2: ${r.failures.length} sessions failed, e.g. ${r.failures.slice(0, 3).join("; ")}`);
    return {
      name: "bare ssh2",
      devices: r.completed,
      ms: r.elapsedMs,
      sessionMs: r.sessionMs,
      cpu: `client ${(after.cpuSeconds - before.cpuSeconds).toFixed(1)}`,
      deviceCpuSeconds: sampleProcess(devices.pid)!.cpuSeconds - deviceBefore,
      load: load(),
    };
  } finally {
    // The client exits by itself after answering; a profile is written only then, so give it that time.
    if (profileDir && client.child.exitCode === null)
      await Promise.race([once(client.child, "exit"), setTimeout(10_000)]);
    await client.stop();
  }
}

function runRow(name: string, run: TaskRunResult, deviceCpuSeconds: number): Row {
  return {
    name,
    devices: run.devices,
    ms: run.elapsedMs,
    sessionMs: run.jobMs,
    deviceCpuSeconds,
    firstStartMs: run.firstStartMs,
    load: load(),
    cpu: `API ${run.apiCpuSeconds.toFixed(1)} + collector ${run.collectorCpuSeconds.toFixed(1)}`,
  };
}

function printTable(rows: Row[]) {
  const head = [
    "",
    "devices",
    "seconds",
    "dev/min",
    "session p50/p90 ms",
    "first job ms",
    "CPU s",
    "device CPU s",
    "load avg",
  ];
  const widths = [28, 8, 9, 9, 20, 14, 28, 14, 18];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("");
  console.log(line(head));
  for (const r of rows) {
    console.log(
      line([
        r.name,
        String(r.devices),
        (r.ms / 1000).toFixed(1),
        perMinute(r.devices, r.ms).toFixed(0),
        `${percentile(r.sessionMs, 0.5).toFixed(0)} / ${percentile(r.sessionMs, 0.9).toFixed(0)}`,
        r.firstStartMs === undefined ? "" : r.firstStartMs.toFixed(0),
        r.cpu,
        r.deviceCpuSeconds.toFixed(1),
        r.load,
      ]),
    );
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await stopAllChildren();
    process.exit(130);
  });
}

const problems: string[] = [];
const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-task-"));
const profileDir = values.profile ? join(dir, "profiles") : undefined;
let devices: BenchChild | undefined;
try {
  buildBundles();
  const startedAt = performance.now();
  devices = startChild("the device server", here("./device-server.ts"), [
    "--devices",
    String(flags.devices),
    "--latency-ms",
    String(flags.latencyMs),
    "--config-kb",
    String(flags.configKb),
    "--chunk-bytes",
    "4096",
  ]);
  const { ports } = await devices.nextMessage<{ ports: number[] }>("its ports", 300_000);
  console.log(
    `${flags.devices} simulated devices listening on 127.0.0.1 in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  const service = await startTaskService({
    dir: join(dir, "service"),
    ports,
    concurrency: flags.concurrency,
    profileDir,
  });
  const rows: Row[] = [];
  const ratios: [string, number][] = [];
  try {
    for (const [label, expected] of [
      ["task run, first versions", "succeeded"],
      ["task run, unchanged", "unchanged"],
    ] as const) {
      const bare = await runBaseline(ports, devices, profileDir && join(profileDir, `bare-${rows.length}`));
      rows.push(bare);
      const deviceBefore = sampleProcess(devices.pid)!.cpuSeconds;
      const run = await service.run(flags.timeoutMs);
      const row = runRow(label, run, sampleProcess(devices.pid)!.cpuSeconds - deviceBefore);
      rows.push(row);
      console.log(
        `${label}: ${JSON.stringify(run.counts)}, collector peak RSS ${(run.collectorPeakRssKb / 1024).toFixed(0)} MB`,
      );
      if (run.failures.length) problems.push(`${label}: devices failed, e.g. ${run.failures.join("; ")}`);
      if ((run.counts[expected] ?? 0) !== flags.devices)
        problems.push(`${label}: expected every device ${expected}, got ${JSON.stringify(run.counts)}`);
      ratios.push([label, perMinute(row.devices, row.ms) / perMinute(bare.devices, bare.ms)]);
      const settled = await service.settle(flags.timeoutMs);
      console.log(
        `${label}: the collector was idle again ${(settled.ms / 1000).toFixed(1)} s after the run (search indexing, compliance: ${settled.cpuSeconds.toFixed(1)} CPU s)`,
      );
    }
  } finally {
    await service.stop();
  }
  console.log(
    `\n${flags.devices} devices, ${flags.latencyMs} ms before each answer, ${flags.configKb} KB running config + 3 short commands, ` +
      `${flags.concurrency} sessions at once (COLLECTOR_CONCURRENCY); one after another on ${availableParallelism()} cores shared by the device ` +
      "process, the client under test and this script. A task run is timed from POST /tasks/{id}/run to its finished_at; its session is the job's duration_ms.",
  );
  printTable(rows);
  for (const [label, ratio] of ratios) {
    console.log(
      `ratio ${label} / bare ssh2 before it: ${ratio.toFixed(3)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? "OK" : "BELOW TARGET"}`,
    );
    if (ratio < TARGET_RATIO) process.exitCode = 1;
  }
  if (profileDir) {
    console.log(`\nthe API and the collector (whole lifetime, both runs):${summarizeProfiles(profileDir)}`);
    for (const bare of readdirSync(profileDir).filter((d) => d.startsWith("bare-")))
      console.log(`\nbare ssh2 (${bare}):${summarizeProfiles(join(profileDir, bare))}`);
  }
} catch (err) {
  problems.push(err instanceof Error ? (err.stack ?? err.message) : String(err));
} finally {
  await devices?.stop();
  if (profileDir) console.log(`\nprofiles kept in ${profileDir} (open them in Chrome DevTools > Performance)`);
  else rmSync(dir, { recursive: true, force: true });
}
if (problems.length) {
  console.error(`\nFAILED:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  process.exitCode = 1;
}
