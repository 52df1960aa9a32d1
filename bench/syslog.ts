import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, count, eq } from "drizzle-orm";
import { openSecretBox } from "../src/runtime/bootstrap.ts";
import { systemClock } from "../src/kernel/clock.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/runtime/seed.ts";
import { nameKey } from "../src/db/name-key.ts";
import { appSettings, configs, devices, templates } from "../src/db/schema/index.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { DEFAULT_LIMITS } from "../collector/session.ts";
import { startSyslogService } from "../collector/syslog/service.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../collector/worker.ts";
import { IOS_CONFIG_COMMAND, iosScript } from "../test/helpers/collector.ts";
import { startFakeDevice } from "../test/helpers/fake-device.ts";

/**
 * `npx tsx bench/syslog.ts [changes=100]`: change-triggered backups end to end, in one process (receiver, worker,
 * database on a temp file) against a fake IOS device on loopback.
 *  1. latency: the device's configuration changes, a `%SYS-5-CONFIG_I` message goes out over UDP, and the time to
 *     the stored version is taken; median and 90th percentile over `changes` changes, with a debounce of 0 s (the
 *     setting adds its seconds to every figure).
 *  2. rate: a child process sends a device's messages (ones no rule matches: parsed, looked up, matched, dropped)
 *     at rising rates for 2 s each, the per-source limit out of the way; the highest rate the receiver counted
 *     99% of is what it takes on this machine before it drops.
 */

const CHANGES = Number(process.argv[2] ?? 100);
const USERNAME = "bench";
const PASSWORD = "bench-syslog-pass";

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-syslog-"));
  const { db, client, location } = await openDatabase(`file:${join(dir, "netkeep.db")}`);
  await migrateDatabase(location, db, systemClock, loadBuiltinTemplates());
  const secrets = await openSecretBox(generateAppKey());
  let version = 0;
  let running = iosScript("bench-sw", ["hostname bench-sw", "interface Gi1/0/1", " description version 0"]);
  const device = await startFakeDevice({
    script: (line) => running.script(line),
    initPrompt: "bench-sw#",
    auth: { username: USERNAME, password: PASSWORD },
  });
  const [ios] = await db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "cisco-ios"));
  const now = new Date();
  const [row] = await db
    .insert(devices)
    .values({
      name: "bench-sw",
      nameKey: nameKey("bench-sw"),
      ip: "127.0.0.1",
      templateId: ios!.id,
      portOverride: device.port,
      username: USERNAME,
      passwordEnc: await secrets.encrypt(PASSWORD),
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: devices.id });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  await db
    .insert(appSettings)
    .values({ id: 1, values: { syslog: { enabled: true, port, debounce_seconds: 0 } }, updatedAt: now });

  const worker = startWorker(
    {
      db,
      secrets,
      clock: systemClock,
      logger: silentLogger,
      owner: "bench",
      limits: DEFAULT_LIMITS,
      connectTimeoutMs: 10_000,
    },
    { ...DEFAULT_WORKER_OPTIONS, concurrency: 4 },
  );
  const syslog = startSyslogService(
    { db, clock: systemClock, logger: silentLogger, queued: () => worker.wake() },
    { owner: "bench", host: "bench", pid: process.pid, version: "bench", concurrency: 4, startedAt: now },
    { ratePerSecond: 1e9, burst: 1e9 },
  );
  await syslog.reconcile();
  if (syslog.state().state !== "listening") throw new Error(`the receiver did not start: ${syslog.state().error}`);

  const versions = async () =>
    (
      await db
        .select({ n: count() })
        .from(configs)
        .where(and(eq(configs.deviceId, row!.id), eq(configs.command, IOS_CONFIG_COMMAND)))
    )[0]!.n;
  const udp = createSocket("udp4");
  const send = (text: string) => new Promise((resolve) => udp.send(text, port, "127.0.0.1", resolve));
  const latencies: number[] = [];
  for (let i = 0; i <= CHANGES; i++) {
    const before = await versions();
    running = iosScript("bench-sw", ["hostname bench-sw", "interface Gi1/0/1", ` description version ${++version}`]);
    const started = performance.now();
    await send(`<189>${i}: *Nov 28 21:00:00.123: %SYS-5-CONFIG_I: Configured from console by bench on vty0 (10.0.0.5)`);
    while ((await versions()) === before) await new Promise((r) => setTimeout(r, 2));
    // The first one warms everything up (JIT, the SSH handshake code): not counted.
    if (i > 0) latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(0);
  console.log(
    `syslog message to stored version, ${latencies.length} changes, debounce 0 s: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`,
  );

  const receiver = syslog.receiver!;
  let best = 0;
  for (const rate of [5_000, 10_000, 20_000, 40_000, 80_000]) {
    const before = receiver.counters.received;
    const total = rate * 2;
    await new Promise((resolve) =>
      spawn(
        process.execPath,
        [
          "-e",
          `
      const s = require("node:dgram").createSocket("udp4");
      const msg = Buffer.from("<190>Nov 28 21:00:00 bench-sw 42: %LINK-3-UPDOWN: Interface Gi1/0/7, changed state to up");
      let sent = 0; const start = Date.now();
      const tick = () => {
        const due = Math.min(${total}, Math.floor(((Date.now() - start) / 1000) * ${rate}));
        while (sent < due) { s.send(msg, ${port}, "127.0.0.1"); sent++; }
        if (sent < ${total}) setTimeout(tick, 1); else setTimeout(() => s.close(), 200);
      };
      tick();`,
        ],
        { stdio: "inherit" },
      ).on("exit", resolve),
    );
    await new Promise((r) => setTimeout(r, 300));
    const got = receiver.counters.received - before;
    const share = got / total;
    console.log(`${rate} messages/s for 2 s: ${got} of ${total} counted (${(share * 100).toFixed(1)}%)`);
    if (share >= 0.99) best = rate;
    else break;
  }
  console.log(
    `receiver rate before it drops (>= 99% counted): ${best ? `${best} messages/s` : "below 5000 messages/s"}`,
  );

  udp.close();
  await syslog.stop();
  await worker.stop(Date.now() + 5000);
  await device.close();
  client.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
