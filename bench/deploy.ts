import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { startChild, stopAllChildren, type BenchChild } from "./children.ts";
import type { PushBenchPlan, PushBenchResult } from "./deploy-push.ts";
import { runServiceDeploy } from "./deploy-service.ts";
import { buildBundles } from "./service.ts";
import { sampleProcess } from "./proc-stats.ts";
import { summarizeProfiles } from "./profile.ts";
import { benchLogin } from "./sim-devices.ts";
import type { BaselinePlan, BaselineResult } from "./ssh-baseline.ts";

/**
 * `npm run bench:deploy [-- --devices 1000 --latency-ms 50 --concurrency 50 --rounds 3 --profile --engine-only]`
 *
 * A 10-line snippet pushed to simulated IOS devices on loopback that apply what they are sent
 * (bench/deploy-devices.ts, one process, one port each), in two phases, each against bare ssh2 clients
 * (bench/ssh-baseline.ts) at the same concurrency, each client in its own process:
 *
 * - the push engine (the internal figure): collector/push.ts with the built-in cisco-ios template against bare
 *   clients doing the same exchange: log in, open a shell, the template's push enter lines, the 10 lines, its
 *   save lines, each waiting for the prompt, then exit. The two alternate for --rounds rounds; the verdict is
 *   on the median ratio. `--profile` prints where the first push phase and the service spent their CPU.
 * - what a user gets (bench/deploy-service.ts): the service as `npm start` runs it, the devices and the snippet
 *   created and the deploy started through the API, timed from the deploy call to the deployment's end. Each
 *   device's push job downloads the configuration before, pushes, and downloads it after, so its like-for-like
 *   baseline is bare clients doing those three sessions per device (the template's setup and download
 *   commands, the push exchange, the download again); the ratio against the push-only clients is printed too.
 *   The target (the issue's "same login/configure/save/exit exchange") is judged on the like-for-like ratio.
 *
 * Exits 1 when a push fails, a device did not save every line, or a ratio judged is below 0.7 of bare ssh2's.
 */
const TARGET_RATIO = 0.7;

const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "1000" },
    "latency-ms": { type: "string", default: "50" },
    concurrency: { type: "string", default: "50" },
    rounds: { type: "string", default: "3" },
    "timeout-s": { type: "string", default: "600" },
    profile: { type: "boolean", default: false },
    "engine-only": { type: "boolean", default: false },
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
  concurrency: flag("concurrency", 1),
  rounds: flag("rounds", 1),
  timeoutMs: flag("timeout-s", 10) * 1000,
};

/** Ten lines an integrator might deploy: NTP, logging and an interface description. */
const SNIPPET = [
  "ntp server 192.0.2.123",
  "ntp server 192.0.2.124",
  "ntp source Vlan1",
  "logging host 192.0.2.50",
  "logging buffered 64000",
  "logging trap informational",
  "interface Vlan1",
  " description managed by netkeep",
  "exit",
  "ip domain name example.net",
];
/** Lines each device's startup configuration must hold after a round (a push that saved nothing would miss them). */
const EXPECTED = ["ntp server 192.0.2.123", "logging host 192.0.2.50", "ip domain name example.net"];

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const perMinute = (devices: number, ms: number) => (devices * 60_000) / ms;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? NaN;

type Phase = { elapsedMs: number; completed: number; failures: string[]; sessionMs: number[] };
type Row = Phase & { name: string; peakRssKb: number; cpuSeconds: number; deviceCpuSeconds: number };

/** Runs one client process on its plan and measures it and the device process meanwhile. */
async function runClient(
  name: string,
  entry: string,
  plan: BaselinePlan | PushBenchPlan,
  devices: BenchChild,
  profileDir?: string,
): Promise<Row> {
  const client = startChild(name, entry, [], {
    nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  });
  try {
    await client.nextMessage<"ready">("ready", 60_000);
    const before = sampleProcess(client.pid)!;
    const deviceBefore = sampleProcess(devices.pid)!.cpuSeconds;
    client.child.send(plan);
    const result = await client.nextMessage<BaselineResult | PushBenchResult>("its result", flags.timeoutMs);
    const after = sampleProcess(client.pid) ?? before;
    return {
      name,
      elapsedMs: result.elapsedMs,
      completed: result.completed,
      failures: result.failures,
      sessionMs: result.sessionMs,
      peakRssKb: after.peakRssKb,
      cpuSeconds: after.cpuSeconds - before.cpuSeconds,
      deviceCpuSeconds: sampleProcess(devices.pid)!.cpuSeconds - deviceBefore,
    };
  } finally {
    // The child exits by itself after answering; a profile is written only then, so give it that time.
    if (profileDir && client.child.exitCode === null)
      await Promise.race([once(client.child, "exit"), setTimeout(10_000)]);
    await client.stop();
  }
}

function printTable(rows: Row[]) {
  const head = ["", "devices", "seconds", "dev/min", "session p50/p90 ms", "peak RSS MB", "CPU s", "device-side CPU s"];
  const widths = [18, 9, 9, 9, 20, 13, 8, 19];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("");
  console.log(line(head));
  for (const r of rows) {
    console.log(
      line([
        r.name,
        String(r.completed),
        (r.elapsedMs / 1000).toFixed(1),
        perMinute(r.completed, r.elapsedMs).toFixed(0),
        `${percentile(r.sessionMs, 0.5).toFixed(0)} / ${percentile(r.sessionMs, 0.9).toFixed(0)}`,
        (r.peakRssKb / 1024).toFixed(1),
        r.cpuSeconds.toFixed(1),
        r.deviceCpuSeconds.toFixed(1),
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
let devices: BenchChild | undefined;
const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-deploy-"));
const profileDir = values.profile ? join(dir, "profiles") : undefined;
try {
  const parsed = parseTemplate(loadBuiltinTemplates().find((t) => t.key === "cisco-ios")!.code);
  if (!parsed.ok || !parsed.template.push)
    throw new Error("the built-in cisco-ios template does not parse or has no push section");
  const t = parsed.template;
  const push = t.push!;
  const startedAt = performance.now();
  devices = startChild("the device server", here("./deploy-devices.ts"), [
    "--devices",
    String(flags.devices),
    "--latency-ms",
    String(flags.latencyMs),
  ]);
  const { ports } = await devices.nextMessage<{ ports: number[] }>("its ports", 300_000);
  console.log(
    `${flags.devices} simulated devices listening on 127.0.0.1 in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  const targets = ports.map((port, i) => ({ port, ...benchLogin(i) }));

  const bare: BaselinePlan = {
    targets,
    concurrency: flags.concurrency,
    prompt: t.prompt!,
    lineEnding: t.line_ending,
    sessions: [[...push.enter, ...SNIPPET, ...push.save]],
    teardown: t.teardown,
    configCommand: "",
    timeoutMs: 60_000,
  };
  const pushPlan: PushBenchPlan = { targets, concurrency: flags.concurrency, lines: SNIPPET, timeoutMs: 60_000 };
  const rows: Row[] = [];
  const ratios: number[] = [];
  const checkDevices = async (label: string) => {
    devices!.child.send({ stats: EXPECTED });
    const stats = await devices!.nextMessage<{ saved: number; unexpected: string[] }>("its stats", 10_000);
    if (stats.saved !== flags.devices)
      problems.push(`${label}: ${flags.devices - stats.saved} devices do not have the snippet saved`);
    if (stats.unexpected.length)
      problems.push(`${label}: devices heard lines they do not know, e.g. ${stats.unexpected.join(", ")}`);
  };
  for (let round = 1; round <= flags.rounds; round++) {
    const suffix = flags.rounds > 1 ? ` #${round}` : "";
    const b = await runClient(`bare ssh2${suffix}`, here("./ssh-baseline.ts"), bare, devices);
    rows.push(b);
    await checkDevices(b.name);
    const p = await runClient(
      `push${suffix}`,
      here("./deploy-push.ts"),
      pushPlan,
      devices,
      round === 1 ? profileDir : undefined,
    );
    rows.push(p);
    await checkDevices(p.name);
    for (const r of [b, p])
      if (r.failures.length)
        problems.push(`${r.name}: ${r.failures.length} sessions failed, e.g. ${r.failures.slice(0, 3).join("; ")}`);
    ratios.push(perMinute(p.completed, p.elapsedMs) / perMinute(b.completed, b.elapsedMs));
  }
  console.log(
    `\n${flags.devices} devices, ${flags.latencyMs} ms before each answer, a ${SNIPPET.length}-line snippet with ${push.enter.length} enter and ` +
      `${push.save.length} save lines, ${flags.concurrency} sessions at once; phases one after another on ${availableParallelism()} cores ` +
      "shared by the device process, the client under test and this script",
  );
  printTable(rows);
  const ratio = percentile(ratios, 0.5);
  const each = ratios.length > 1 ? ` (median of ${ratios.map((r) => r.toFixed(3)).join(", ")})` : "";
  console.log(
    `ratio push/bare ssh2: ${ratio.toFixed(3)}${each} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? "OK" : "BELOW TARGET"}`,
  );
  if (ratio < TARGET_RATIO) process.exitCode = 1;

  if (!values["engine-only"]) {
    // What each push job does per device: the download before, the push exchange, the download after.
    const download = [...t.setup, ...t.commands];
    const full: BaselinePlan = {
      ...bare,
      sessions: [download, [...push.enter, ...SNIPPET, ...push.save], download],
      configCommand: t.config_command ?? t.commands[0]!,
    };
    const b = await runClient("bare ssh2 3 sessions", here("./ssh-baseline.ts"), full, devices);
    await checkDevices(b.name);
    if (b.failures.length)
      problems.push(`${b.name}: ${b.failures.length} devices failed, e.g. ${b.failures.slice(0, 3).join("; ")}`);
    const deviceCpuBefore = sampleProcess(devices.pid)!.cpuSeconds;
    const serviceProfiles = profileDir && join(profileDir, "service");
    buildBundles();
    const run = await runServiceDeploy({
      dir: join(dir, "service"),
      ports,
      lines: SNIPPET,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeoutMs,
      profileDir: serviceProfiles,
    });
    const s: Row = {
      name: "service deploy",
      elapsedMs: run.elapsedMs,
      completed: run.deviceCounts.success ?? 0,
      failures: run.failures,
      sessionMs: run.jobMs,
      peakRssKb: run.collectorPeakRssKb,
      cpuSeconds: run.apiCpuSeconds + run.collectorCpuSeconds,
      deviceCpuSeconds: sampleProcess(devices.pid)!.cpuSeconds - deviceCpuBefore,
    };
    await checkDevices(s.name);
    if (s.completed !== flags.devices)
      problems.push(
        `${s.name}: devices by status ${JSON.stringify(run.deviceCounts)}, e.g. ${run.failures.join("; ")}`,
      );
    console.log(
      `\nend to end: \`npm start\` (API + collector, COLLECTOR_CONCURRENCY and the deployment's concurrency ${flags.concurrency}), ` +
        "the deploy call to the deployment's end; bare ssh2 3 sessions does each device's download before, push and download after",
    );
    printTable([b, s]);
    console.log(
      `service CPU: API ${run.apiCpuSeconds.toFixed(1)} s, collector ${run.collectorCpuSeconds.toFixed(1)} s; peak RSS is the collector's; session = the push job (before, push, after)`,
    );
    const rate = perMinute(s.completed, s.elapsedMs);
    const pushOnly = percentile(
      rows.filter((r) => r.name.startsWith("bare ssh2")).map((r) => perMinute(r.completed, r.elapsedMs)),
      0.5,
    );
    const like = rate / perMinute(b.completed, b.elapsedMs);
    console.log(
      `ratio service/bare ssh2 3 sessions (like for like, judged): ${like.toFixed(3)} (target >= ${TARGET_RATIO}) ${like >= TARGET_RATIO ? "OK" : "BELOW TARGET"}`,
    );
    console.log(
      `ratio service/bare ssh2 push only (median round above; not like for like: the job also downloads twice): ${(rate / pushOnly).toFixed(3)}`,
    );
    if (like < TARGET_RATIO) process.exitCode = 1;
    if (serviceProfiles)
      console.log(`\nthe service (API, collector; whole lifetime):${summarizeProfiles(serviceProfiles)}`);
  }
  if (profileDir) console.log(summarizeProfiles(profileDir));
} catch (err) {
  problems.push(err instanceof Error ? err.message : String(err));
} finally {
  await devices?.stop();
  if (profileDir) console.log(`\nprofiles kept in ${profileDir} (open them in Chrome DevTools > Performance)`);
  else rmSync(dir, { recursive: true, force: true });
}
if (problems.length) {
  console.error(`\nFAILED:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  process.exitCode = 1;
}
