import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { promisify } from "node:util";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { startSyslogService } from "../../collector/syslog/service.ts";
import { configChanges, events, jobs } from "../../src/db/schema/index.ts";
import { claimNextJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { freeUdpAndTcpPort } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";

/**
 * Change-triggered backups: real syslog messages, sent over UDP and TCP by util-linux's `logger` (RFC 3164 and
 * RFC 5424) and by sockets bound to a second loopback address (a source that is no device), to the collector's
 * receiver; a matching message queues a debounced download whose version says who changed the configuration.
 */

const USERNAME = "syslog-op";
const PASSWORD = "Syslog-Test-Pass-1";
const DEBOUNCE_S = 30;
const CHANGE = "%SYS-5-CONFIG_I: Configured from console by admin on vty0 (10.0.0.5)";

const loggerMissing = await promisify(execFile)("logger", ["--help"]).then(
  () => undefined,
  () => "util-linux's logger is not installed (apt-get install bsdutils)",
);

let t: TestContext;
let token: string;
const clock = manualClock();
let device: FakeDevice;
let deviceId: number;
let running = iosScript("core-sw1", ["hostname core-sw1", "interface Gi1/0/1", " description before"]);
let port: number;
let service: ReturnType<typeof startSyslogService>;

const logger = (args: string[]) => promisify(execFile)("logger", ["-n", "127.0.0.1", "-P", String(port), ...args]);

/** Waits (real time: the kernel delivers the packets) until the receiver has counted `n` messages, then for its writes. */
async function received(n: number): Promise<void> {
  await until(
    `${n} messages received`,
    () => service.receiver?.counters.received ?? 0,
    (count) => count >= n,
    {
      tries: 600,
      everyMs: 50,
    },
  );
  await service.receiver!.idle();
}

/** Claims the job due by the injected clock, if any, and runs it as a collector would. */
async function runDueJob(): Promise<Job | undefined> {
  const job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000);
  if (!job) return undefined;
  await runDownloadJob(
    {
      db: t.db,
      secrets: t.secrets,
      clock,
      logger: silentLogger,
      owner: "test-collector",
      limits: DEFAULT_LIMITS,
      connectTimeoutMs: 10_000,
    },
    job,
    new AbortController().signal,
  );
  return (await getJob(t.db, job.id))!;
}

const syslogJobs = () =>
  t.db
    .select()
    .from(jobs)
    .where(and(eq(jobs.deviceId, deviceId), eq(jobs.trigger, "syslog")));

beforeAll(async () => {
  t = await createTestContext({ clock });
  token = await t.token();
  device = await startFakeDevice({
    script: (line) => running.script(line),
    initPrompt: "core-sw1#",
    auth: { username: USERNAME, password: PASSWORD },
  });
  deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
  });
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  port = await freeUdpAndTcpPort();
  service = startSyslogService(
    { db: t.db, clock, logger: silentLogger },
    {
      owner: "test-collector",
      host: "test",
      pid: process.pid,
      version: "test",
      concurrency: 1,
      startedAt: clock.now(),
    },
  );
});
afterAll(async () => {
  await service?.stop();
  await device?.close();
  await t.close();
});

describe("the syslog receiver", () => {
  it("is off by default, and listens once the settings turn it on", async () => {
    await service.reconcile();
    expect(service.state().state).toBe("off");
    const patched = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { syslog: { enabled: true, port, debounce_seconds: DEBOUNCE_S } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.syslog).toEqual({
      enabled: true,
      port,
      bind_address: "0.0.0.0",
      debounce_seconds: DEBOUNCE_S,
      relays: [],
    });
    await service.reconcile();
    expect(service.state()).toMatchObject({ state: "listening", port });
  });

  it("refuses settings that cannot work, saying what to fix", async () => {
    const res = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { syslog: { port: 70000, bind_address: "everywhere" } },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors["syslog.port"]?.[0]).toContain("must be at most 65535");
    expect(res.body.errors["syslog.bind_address"]?.[0]).toContain("must be an IPv4 or IPv6 address");
  });

  it.skipIf(loggerMissing)(
    "debounces changes sent by logger in both formats over UDP and TCP into one backup, which says who changed what",
    async () => {
      const before = { ...service.receiver!.counters };
      await logger(["--rfc3164", "-d", "-t", "ios", CHANGE]);
      await logger(["--rfc5424", "-T", "-t", "ios", CHANGE.replace("admin", "operator").replace("vty0", "vty1")]);
      await logger([
        "--rfc5424",
        "-T",
        "--octet-count",
        "-t",
        "ios",
        "%LINK-3-UPDOWN: Interface Gi1/0/2, changed state to up",
      ]);
      await received(before.received + 3);
      expect(service.receiver!.counters.matched - before.matched).toBe(2);
      expect(service.receiver!.counters.ignored - before.ignored).toBe(1);
      const [job, ...more] = await syslogJobs();
      expect(more).toEqual([]);
      expect(job!.params).toMatchObject({ changed_by: "changed by operator from 10.0.0.5 via vty1" });
      // Not due until the quiet time after the last message has passed on the injected clock.
      expect(await runDueJob()).toBeUndefined();
      running = iosScript("core-sw1", ["hostname core-sw1", "interface Gi1/0/1", " description after"]);
      clock.advance(DEBOUNCE_S * 1000);
      const ran = await runDueJob();
      expect(ran?.id).toBe(job!.id);
      expect(ran?.outcome, ran?.message ?? "").toBe("success");
      expect((await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)).toContain(" description after");
      const [change] = await t.db
        .select()
        .from(configChanges)
        .where(and(eq(configChanges.deviceId, deviceId), eq(configChanges.trigger, "syslog")));
      expect(change!.changedBy).toBe("changed by operator from 10.0.0.5 via vty1");
      const api = await t.call(`/api/v2/config-changes/${change!.id}`, { token });
      expect(api.body.data, JSON.stringify(api.body)).toMatchObject({
        trigger: "syslog",
        changed_by: "changed by operator from 10.0.0.5 via vty1",
      });
      const changed = (await t.db.select().from(events).where(eq(events.type, "config.changed"))).map(
        (e) => e.payload as Record<string, unknown>,
      );
      expect(changed.filter((p) => p.job_id === job!.id)).toEqual([
        expect.objectContaining({
          command: IOS_CONFIG_COMMAND,
          changed_by: "changed by operator from 10.0.0.5 via vty1",
        }),
      ]);
    },
  );

  it("counts and drops messages from an address of no device, and malformed ones from a device", async () => {
    const before = { ...service.receiver!.counters };
    const udp = createSocket("udp4");
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.2", () => resolve()));
    await new Promise((resolve) => udp.send(`<189>${CHANGE}`, port, "127.0.0.1", resolve));
    udp.close();
    await new Promise<void>((resolve) => {
      const tcp = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" }, () =>
        tcp.end(`<189>${CHANGE}\n`, () => resolve()),
      );
    });
    const udp1 = createSocket("udp4");
    await new Promise((resolve) => udp1.send("no priority at all", port, "127.0.0.1", resolve));
    await new Promise((resolve) => udp1.send("<999>bad priority", port, "127.0.0.1", resolve));
    udp1.close();
    await received(before.received + 4);
    const after = service.receiver!.counters;
    expect(after.unknown_source - before.unknown_source).toBe(2);
    expect(after.malformed - before.malformed).toBe(2);
    expect(after.matched).toBe(before.matched);
    expect(await syslogJobs().then((rows) => rows.filter((r) => r.state === "queued"))).toEqual([]);
  });

  it.skipIf(loggerMissing)(
    "a flood of 100,000 messages while a backup runs: nothing crashes, the API answers, the one real change is backed up",
    async () => {
      const before = { ...service.receiver!.counters };
      const FLOOD = 100_000;
      // From a second loopback address (no device), in a process of its own, as fast as it can send.
      const flood = spawn(
        process.execPath,
        [
          "-e",
          `
      const s = require("node:dgram").createSocket("udp4");
      s.bind(0, "127.0.0.2", async () => {
        let sent = 0;
        const one = () => new Promise((r) => s.send("<190>Nov 28 21:00:00 noisy app: flood message " + sent, ${port}, "127.0.0.1", r));
        while (sent < ${FLOOD}) { const batch = []; for (let i = 0; i < 200 && sent < ${FLOOD}; i++, sent++) batch.push(one()); await Promise.all(batch); }
        s.close();
      });`,
        ],
        { stdio: "ignore" },
      );
      const flooded = new Promise((resolve) => flood.on("exit", resolve));
      // A backup runs meanwhile (the configuration it reads is still the old one), slowed down by the device.
      const backup = downloadOnce(t, deviceId);
      // The real change, over TCP; then the device itself floods: past its rate (the injected clock stands still, so
      // its bucket does not refill) its messages are dropped, and the receiver stays up.
      await logger(["--rfc3164", "-T", "-t", "ios", CHANGE.replace("admin", "flood-admin")]);
      const own = createSocket("udp4");
      for (let i = 0; i < 2000; i++)
        own.send(`<190>%LINK-5-CHANGED: Interface Gi1/0/${i}, changed state to up`, port, "127.0.0.1");
      const health = await t.call("/api/v1/devices", { token });
      expect(health.status).toBe(200);
      expect((await backup).outcome).toMatch(/^(success|unchanged)$/);
      await flooded;
      own.close();
      await until(
        "both floods to reach the receiver",
        () => ({ ...service.receiver!.counters }),
        (c) => c.rate_limited > before.rate_limited && c.unknown_source > before.unknown_source,
      );
      await service.receiver!.idle();
      const after = service.receiver!.counters;
      expect(after.matched - before.matched).toBe(1);
      expect(after.rate_limited - before.rate_limited).toBeGreaterThan(0);
      expect(after.unknown_source - before.unknown_source).toBeGreaterThan(0);
      expect(service.state().state).toBe("listening");
      running = iosScript("core-sw1", ["hostname core-sw1", "interface Gi1/0/1", " description after the flood"]);
      clock.advance(DEBOUNCE_S * 1000);
      const ran = await runDueJob();
      expect(ran?.trigger).toBe("syslog");
      expect(ran?.outcome, ran?.message ?? "").toBe("success");
      const changes = await t.db
        .select()
        .from(configChanges)
        .where(and(eq(configChanges.deviceId, deviceId), eq(configChanges.trigger, "syslog")));
      expect(changes.map((c) => c.changedBy)).toContain("changed by flood-admin from 10.0.0.5 via vty0");
      expect(await runDueJob()).toBeUndefined();
      // eslint-disable-next-line no-console
      console.log(
        `flood: ${after.received - before.received} of ${FLOOD + 2001} messages reached the receiver (the rest the kernel dropped), ${after.rate_limited - before.rate_limited} over the rate, ${after.unknown_source - before.unknown_source} from no device`,
      );
    },
    120_000,
  );

  it("the health check and the metrics show the receiver's state", async () => {
    await service.reconcile();
    const health = await t.call("/api/v1/system/health/run", { method: "POST", token });
    const syslog = health.body.data.checks.find((c: { name: string }) => c.name === "syslog");
    expect(syslog).toMatchObject({ status: "ok" });
    expect(syslog.message).toMatch(new RegExp(`^Listening on port ${port}: \\d+ messages received`));
    const text = await (await t.request("/metrics", { headers: { authorization: `Bearer ${token}` } })).text();
    expect(text).toContain("netkeep_syslog_receivers_listening 1");
    expect(text).toMatch(/netkeep_syslog_messages\{outcome="matched"\} [1-9]/);
  });

  it("stops when the settings turn it off, and the health check says it is off", async () => {
    await t.call("/api/v1/settings", { method: "PATCH", token, body: { syslog: { enabled: false } } });
    await service.reconcile();
    expect(service.state().state).toBe("off");
    const health = await t.call("/api/v1/system/health/run", { method: "POST", token });
    expect(health.body.data.checks.find((c: { name: string }) => c.name === "syslog")).toMatchObject({
      status: "ok",
      message: expect.stringMatching(/^Off/),
    });
  });
});

if (loggerMissing) {
  describe("logger", () => {
    if (process.env.CI) it("is installed (required in CI)", () => expect.fail(loggerMissing));
    else it.skip(`skipped: ${loggerMissing}`, () => {});
  });
}
