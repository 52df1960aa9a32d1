import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { startChild, stopAllChildren, type BenchChild } from "./children.ts";
import { runCollector } from "./collector-run.ts";
import { sampleProcess } from "./proc-stats.ts";
import { summarizeProfiles } from "./profile.ts";
import { benchLogin } from "./sim-devices.ts";
import { buildBundles } from "./service.ts";
import type { BaselinePlan, BaselineResult } from "./ssh-baseline.ts";

/**
 * `npm run bench:collect [-- --devices 1000 --latency-ms 50 --config-kb 100 --concurrency 50 --rss-concurrency 500 --rounds 3]`
 * `npm run bench:ssh-limit [-- same flags]` (the bare-ssh2 baseline alone)
 *
 * Simulated Cisco IOS devices on loopback (one process, one port each) answer the built-in cisco-ios template
 * after --latency-ms, with a --config-kb running config. Against them, one after another (the machine's cores are
 * shared by the devices, the clients and this script): bare ssh2 clients doing the same exchanges with no storage,
 * the real collector process at --concurrency, and the collector again at --rss-concurrency to check its memory.
 * The first two alternate for --rounds rounds: on a machine this size one round's ratio varies by +-0.07 from
 * run to run, so the verdict is on the median round. Prints devices per minute, peak RSS and CPU seconds of each
 * phase, each round's ratio and their median. Exits 1 when a device fails or a target is missed: median ratio
 * >= 0.8 of bare ssh2's rate, collector RSS < 400 MB at 500 sessions.
 */
const TARGET_RATIO = 0.8;
const TARGET_RSS_MB = 400;

const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "1000" },
    "latency-ms": { type: "string", default: "50" },
    "config-kb": { type: "string", default: "100" },
    concurrency: { type: "string", default: "50" },
    "rss-concurrency": { type: "string", default: "500" },
    rounds: { type: "string", default: "3" },
    "chunk-bytes": { type: "string", default: "4096" },
    "timeout-s": { type: "string", default: "900" },
    "baseline-only": { type: "boolean", default: false },
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
  rssConcurrency: values["baseline-only"] ? 0 : flag("rss-concurrency", 0),
  rounds: flag("rounds", 1),
  chunkBytes: flag("chunk-bytes", 0),
  timeoutMs: flag("timeout-s", 10) * 1000,
};

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const mb = (kb: number) => kb / 1024;
const perMinute = (devices: number, ms: number) => (devices * 60_000) / ms;

type Row = {
  name: string;
  concurrency: number;
  devices: number;
  ms: number;
  sessionMs: number[];
  peakRssKb: number;
  cpuSeconds: number;
  deviceCpuSeconds: number;
  note?: string;
};
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN;

/** Runs `work` and returns how much CPU the device process spent meanwhile (serving is part of each phase's cost). */
async function withDeviceCpu<T>(devices: BenchChild, work: () => Promise<T>): Promise<[T, number]> {
  const before = sampleProcess(devices.pid)!.cpuSeconds;
  const result = await work();
  return [result, sampleProcess(devices.pid)!.cpuSeconds - before];
}

async function runBaseline(
  ports: number[],
): Promise<{ result: BaselineResult; peakRssKb: number; cpuSeconds: number }> {
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
  const baseline = startChild("the ssh2 baseline", here("./ssh-baseline.ts"), []);
  try {
    await baseline.nextMessage<"ready">("ready", 60_000);
    const before = sampleProcess(baseline.pid)!;
    baseline.child.send(plan);
    const result = await baseline.nextMessage<BaselineResult>("its result", flags.timeoutMs);
    const after = sampleProcess(baseline.pid) ?? before;
    return { result, peakRssKb: after.peakRssKb, cpuSeconds: after.cpuSeconds - before.cpuSeconds };
  } finally {
    await baseline.stop();
  }
}

function printTable(rows: Row[]) {
  const head = [
    "",
    "conc",
    "devices",
    "seconds",
    "dev/min",
    "session p50/p90 ms",
    "peak RSS MB",
    "CPU s",
    "CPU ms/dev",
    "device-side CPU s",
  ];
  const widths = [26, 6, 9, 9, 9, 20, 13, 8, 12, 19];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("");
  console.log(line(head));
  for (const r of rows) {
    console.log(
      line([
        r.name,
        String(r.concurrency),
        String(r.devices),
        (r.ms / 1000).toFixed(1),
        perMinute(r.devices, r.ms).toFixed(0),
        `${percentile(r.sessionMs, 0.5).toFixed(0)} / ${percentile(r.sessionMs, 0.9).toFixed(0)}`,
        mb(r.peakRssKb).toFixed(1),
        r.cpuSeconds.toFixed(1),
        ((1000 * r.cpuSeconds) / r.devices).toFixed(1),
        r.deviceCpuSeconds.toFixed(1),
      ]) + (r.note ? `  ${r.note}` : ""),
    );
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await stopAllChildren();
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
}

const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-collect-"));
const problems: string[] = [];
let devices: BenchChild | undefined;
try {
  // The collector runs as production runs it: the bundle, built now from the checkout.
  if (!values["baseline-only"]) buildBundles();
  // The memory check needs as many devices as sessions; the rate phases use the first --devices of them.
  const served = Math.max(flags.devices, flags.rssConcurrency);
  const startedAt = performance.now();
  devices = startChild("the device server", here("./device-server.ts"), [
    "--devices",
    String(served),
    "--latency-ms",
    String(flags.latencyMs),
    "--config-kb",
    String(flags.configKb),
    "--chunk-bytes",
    String(flags.chunkBytes),
  ]);
  const { ports } = await devices.nextMessage<{ ports: number[] }>("its ports", 300_000);
  console.log(
    `${served} simulated devices listening on 127.0.0.1 in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  const ratePorts = ports.slice(0, flags.devices);
  const rows: Row[] = [];

  const profileDir = values.profile ? join(dir, "profiles") : undefined;
  const ratios: number[] = [];
  const runPhase = async (label: string, ports: number[], concurrency: number, profileDir?: string) => {
    const [run, deviceCpu] = await withDeviceCpu(devices!, () =>
      runCollector({
        dir: join(dir, `run-${rows.length}`),
        ports,
        concurrency,
        profileDir,
        timeoutMs: flags.timeoutMs,
      }),
    );
    rows.push({
      name: label,
      concurrency: run.concurrency,
      devices: run.devices,
      ms: run.elapsedMs,
      sessionMs: run.jobMs,
      peakRssKb: run.peakRssKb,
      cpuSeconds: run.cpuSeconds,
      deviceCpuSeconds: deviceCpu,
      note: `peak ${run.peakRunning} jobs running, RSS ${mb(run.idleRssKb).toFixed(0)} MB idle`,
    });
    console.log(
      `${label}: outcomes ${JSON.stringify(run.outcomes)}, ${run.storedConfigs} running configs stored, ${(run.avgConfigBytes / 1024).toFixed(1)} KB each; ` +
        `search index caught up ${(run.indexCatchUpMs / 1000).toFixed(1)} s after the last job (${run.indexCpuSeconds.toFixed(1)} CPU s)`,
    );
    if (run.failures.length)
      problems.push(
        `${label}: ${run.devices - (run.outcomes.success ?? 0) - (run.outcomes.unchanged ?? 0)} jobs failed, e.g. ${run.failures.join("; ")}`,
      );
    if (run.storedConfigs !== run.devices)
      problems.push(`${label}: ${run.storedConfigs} running configs stored for ${run.devices} devices`);
    return run;
  };

  const rounds = values["baseline-only"] ? 1 : flags.rounds;
  for (let round = 1; round <= rounds; round++) {
    const suffix = rounds > 1 ? ` #${round}` : "";
    const [baseline, baselineDeviceCpu] = await withDeviceCpu(devices, () => runBaseline(ratePorts));
    const b = baseline.result;
    rows.push({
      name: `bare ssh2${suffix}`,
      concurrency: flags.concurrency,
      devices: b.completed,
      ms: b.elapsedMs,
      sessionMs: b.sessionMs,
      peakRssKb: baseline.peakRssKb,
      cpuSeconds: baseline.cpuSeconds,
      deviceCpuSeconds: baselineDeviceCpu,
    });
    console.log(
      `bare ssh2${suffix}: ${b.completed} sessions in ${(b.elapsedMs / 1000).toFixed(1)} s, ${(b.configBytes / Math.max(1, b.completed) / 1024).toFixed(1)} KB config each`,
    );
    if (b.failures.length)
      problems.push(`baseline: ${b.failures.length} sessions failed, e.g. ${b.failures.slice(0, 3).join("; ")}`);
    if (values["baseline-only"]) break;
    const run = await runPhase(
      `collector${suffix}`,
      ratePorts,
      flags.concurrency,
      round === 1 ? profileDir : undefined,
    );
    ratios.push(perMinute(run.devices, run.elapsedMs) / perMinute(b.completed, b.elapsedMs));
  }
  const memory = flags.rssConcurrency
    ? await runPhase("collector (memory check)", ports, flags.rssConcurrency)
    : undefined;

  devices.child.send("stats");
  const stats = await devices.nextMessage<{ sessions: number; unexpected: string[]; unexpectedCount: number }>(
    "its stats",
    10_000,
  );
  if (stats.unexpectedCount)
    problems.push(
      `the devices heard ${stats.unexpectedCount} lines they do not know, e.g. ${stats.unexpected.join(", ")}`,
    );

  console.log(
    `\n${flags.devices} devices, ${flags.latencyMs} ms before each answer, ${flags.configKb} KB running config + 3 short commands, ` +
      `answers sent in ${flags.chunkBytes || "whole"}-byte pieces; phases one after another on ${availableParallelism()} cores ` +
      "shared by the device process, the client under test and this script",
  );
  printTable(rows);
  if (ratios.length) {
    // The median for an odd number of rounds; for an even number, the upper of the middle two.
    const ratio = percentile(ratios, 0.5);
    const each = ratios.length > 1 ? ` (median of ${ratios.map((r) => r.toFixed(3)).join(", ")})` : "";
    console.log(
      `ratio collector/bare ssh2: ${ratio.toFixed(3)}${each} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? "OK" : "BELOW TARGET"}`,
    );
    if (ratio < TARGET_RATIO) process.exitCode = 1;
  }
  if (memory) {
    const peak = mb(memory.peakRssKb);
    const reached =
      memory.peakRunning >= memory.concurrency ? "" : ` (only ${memory.peakRunning} sessions were open at once)`;
    console.log(
      `collector peak RSS at ${memory.concurrency} sessions: ${peak.toFixed(1)} MB${reached} (target < ${TARGET_RSS_MB} MB) ${peak < TARGET_RSS_MB ? "OK" : "ABOVE TARGET"}`,
    );
    if (peak >= TARGET_RSS_MB) process.exitCode = 1;
  }
  if (profileDir) console.log(summarizeProfiles(profileDir));
} catch (err) {
  problems.push(err instanceof Error ? err.message : String(err));
} finally {
  await devices?.stop();
  if (values.profile) console.log(`\nprofiles kept in ${dir}/profiles (open them in Chrome DevTools > Performance)`);
  else rmSync(dir, { recursive: true, force: true });
}
if (problems.length) {
  console.error(`\nFAILED:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  process.exitCode = 1;
}
