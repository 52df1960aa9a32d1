import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSyslogService } from "../../collector/syslog/service.ts";
import { jobs } from "../../src/db/schema/index.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../helpers/collector.ts";
import { freeUdpAndTcpPort } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";

/**
 * Syslog messages relayed by Debian's rsyslog (a real rsyslogd, unprivileged, on loopback ports with its own
 * configuration): a trusted relay's messages are matched by their HOSTNAME field, an untrusted sender's never.
 */

const RSYSLOGD = ["/usr/sbin/rsyslogd", "/sbin/rsyslogd"].find((p) => existsSync(p));
const rsyslogMissing = RSYSLOGD ? undefined : "rsyslogd is not installed (apt-get install rsyslog)";
const commit = (hostname: string) =>
  `<189>Nov 28 21:00:00 ${hostname} mgd[4242]: UI_COMMIT: User 'admin' requested 'commit' operation (comment: none)`;

let t: TestContext;
let token: string;
const clock = manualClock();
let service: ReturnType<typeof startSyslogService>;
let rsyslog: ChildProcess | undefined;
let relayPort: number;
let dir: string;
const devices: Record<"named" | "addressed", number> = { named: 0, addressed: 0 };

const syslogJobs = (deviceId: number) =>
  t.db
    .select()
    .from(jobs)
    .where(and(eq(jobs.deviceId, deviceId), eq(jobs.trigger, "syslog")));

/** Sends one datagram from a loopback address. */
async function sendFrom(address: string, port: number, text: string): Promise<void> {
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, address, () => resolve()));
  await new Promise((resolve) => udp.send(text, port, "127.0.0.1", resolve));
  udp.close();
}

/** Waits (real time: rsyslog and the kernel deliver the packets) until the receiver has counted `n` messages, then for its writes. */
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

describe.skipIf(rsyslogMissing)("messages relayed by rsyslog", () => {
  beforeAll(async () => {
    t = await createTestContext({ clock });
    token = await t.token();
    const junos = await builtinTemplateId(t, "juniper-junos");
    // Neither device's address is the relay's (127.0.0.1): only the HOSTNAME field can name them.
    devices.named = await addLoopbackDevice(t, token, {
      port: 22,
      templateId: junos,
      name: "MX1-Edge",
      device_ip: "127.0.0.77",
      device_vendor: "Juniper",
    });
    devices.addressed = await addLoopbackDevice(t, token, {
      port: 22,
      templateId: junos,
      name: "mx2-core",
      device_ip: "127.0.0.78",
      device_vendor: "Juniper",
    });
    const port = await freeUdpAndTcpPort();
    relayPort = await freeUdpAndTcpPort();
    const patched = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { syslog: { enabled: true, port, debounce_seconds: 30 } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
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
    await service.reconcile();
    expect(service.state().state).toBe("listening");

    dir = mkdtempSync(join(tmpdir(), "netkeep-rsyslog-"));
    writeFileSync(
      join(dir, "rsyslog.conf"),
      [
        `global(workDirectory="${dir}")`,
        'module(load="imudp")',
        `input(type="imudp" address="127.0.0.1" port="${relayPort}")`,
        `*.* action(type="omfwd" target="127.0.0.1" port="${port}" protocol="udp")`,
      ].join("\n"),
    );
    rsyslog = spawn(RSYSLOGD!, ["-n", "-f", join(dir, "rsyslog.conf"), "-i", join(dir, "rsyslogd.pid")], {
      stdio: "ignore",
    });
    // rsyslog is ready when a message sent to it reaches the receiver (its start-up takes a moment).
    await until(
      "rsyslogd to relay a message",
      async () => {
        const relayed = service.receiver!.counters.received > 0;
        if (!relayed) await sendFrom("127.0.0.1", relayPort, "<14>Nov 28 21:00:00 nobody-here test: ready?");
        return relayed;
      },
      Boolean,
      { tries: 101, everyMs: 100 },
    );
  }, 30_000);
  afterAll(async () => {
    rsyslog?.kill();
    await service?.stop();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a relay that is no address", async () => {
    const res = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { syslog: { relays: ["rsyslog.example"] } },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain("must be an IPv4 or IPv6 address");
  });

  it("ignores the HOSTNAME field until the relay's address is trusted, then backs up the device it names by name or address", async () => {
    let before = { ...service.receiver!.counters };
    await sendFrom("127.0.0.1", relayPort, commit("mx1-edge"));
    await received(before.received + 1);
    expect(service.receiver!.counters.unknown_source - before.unknown_source).toBe(1);
    expect(await syslogJobs(devices.named)).toEqual([]);

    const patched = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { syslog: { relays: ["127.0.0.1"] } },
    });
    expect(patched.body.data.syslog.relays).toEqual(["127.0.0.1"]);
    await service.reconcile();
    before = { ...service.receiver!.counters };
    // The name in another case, and the other device by its address.
    await sendFrom("127.0.0.1", relayPort, commit("MX1-EDGE"));
    await sendFrom("127.0.0.1", relayPort, commit("127.0.0.78"));
    await received(before.received + 2);
    expect(service.receiver!.counters.matched - before.matched).toBe(2);
    expect(await syslogJobs(devices.named)).toHaveLength(1);
    expect(await syslogJobs(devices.addressed)).toHaveLength(1);
  });

  it("never takes the HOSTNAME field of a sender that is no trusted relay", async () => {
    const before = { ...service.receiver!.counters };
    const jobsBefore = (await syslogJobs(devices.named)).length;
    // Straight to the receiver from 127.0.0.2, naming a device: no device has that address and it is no relay.
    await sendFrom("127.0.0.2", service.receiver!.options.port, commit("mx1-edge"));
    await received(before.received + 1);
    expect(service.receiver!.counters.unknown_source - before.unknown_source).toBe(1);
    expect(await syslogJobs(devices.named)).toHaveLength(jobsBefore);
  });
});

if (rsyslogMissing) {
  describe("rsyslog", () => {
    if (process.env.CI) it("is installed (required in CI)", () => expect.fail(rsyslogMissing));
    else it.skip(`skipped: ${rsyslogMissing}`, () => {});
  });
}
