import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configs, devices, events } from "../../src/db/schema/index.ts";
import { storeConfig } from "../../src/modules/configs/storage/store.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { builtinTemplateId, downloadOnce } from "../helpers/collector.ts";
import { runDetectJob } from "../../collector/detect-job.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { claimNextJob, getJob } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { failWithOutput, freePort, start, stopGroup, type Spawned } from "../helpers/process.ts";
import { until } from "../helpers/until.ts";

/**
 * The collector's SNMP step against a real net-snmp agent (Debian's snmpd) on loopback, dressed as a Cisco
 * switch: sysDescr, sysObjectID and sysName from its config file, ENTITY-MIB's chassis model through an
 * `override`, and Cisco's config-change OID (ccmHistoryRunningLastChanged, which the built-in cisco-ios template
 * names) served by a `pass_persist` script from a file the test rewrites. SSH, where a test needs it, is the fake device.
 */

const SNMPD = "/usr/sbin/snmpd";
const COMMUNITY = "lab-ro-Q7x2";
const V3 = { user: "netkeep-mon", auth: "auth-secret-Hk3p", priv: "priv-secret-Zt8w" };
const CCM_OID = "1.3.6.1.4.1.9.9.43.1.1.1.0";
const SYS = {
  descr: "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E8, RELEASE SOFTWARE (fc1)",
  objectId: "1.3.6.1.4.1.9.1.1208",
  name: "lab-sw-01",
  chassis: "WS-C2960X-48FPD-L",
};
const LOGIN = { username: "netadmin", password: "lab-pass-9dK2" };
const CISCO_COMMANDS = ["show running-config", "show version", "show vtp status", "show inventory"];

function snmpdUnavailable(): string | undefined {
  return existsSync(SNMPD) ? undefined : `${SNMPD} not found: install the Debian package snmpd`;
}

const unavailable = snmpdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the real-snmpd tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/collector/snmp.test.ts skipped: ${unavailable}`);
}

type Snmpd = { port: number; setConfigChanged(ticks: number): void; stop(): Promise<void>; output(): string };

/** snmpd in the foreground (-f, log to stdout) with only our config (-C), its state kept in the temp dir. */
async function startSnmpd(dir: string): Promise<Snmpd> {
  const port = await freePort();
  const valueFile = join(dir, "ccm-value");
  writeFileSync(valueFile, "4242\n");
  // `pass_persist` protocol (plain `pass` output is cached by snmpd for 30 s): "PING" is answered "PONG";
  // "get" then an OID is answered with the OID, its type and its value, or NONE; anything else gets NONE.
  writeFileSync(
    join(dir, "ccm.sh"),
    [
      "#!/bin/sh",
      "while read -r cmd; do",
      '  case "$cmd" in',
      "    PING) echo PONG ;;",
      `    get) read -r oid; if [ "$oid" = ".${CCM_OID}" ]; then echo "$oid"; echo timeticks; cat '${valueFile}'; else echo NONE; fi ;;`,
      "    getnext) read -r oid; echo NONE ;;",
      "    set) read -r oid; read -r value; echo not-writable ;;",
      "    '') exit 0 ;;",
      "    *) echo NONE ;;",
      "  esac",
      "done",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "snmpd.conf"),
    [
      `rocommunity ${COMMUNITY} 127.0.0.1`,
      `createUser ${V3.user} SHA-256 "${V3.auth}" AES "${V3.priv}"`,
      `rouser ${V3.user} priv`,
      `sysdescr ${SYS.descr}`,
      `sysobjectid .${SYS.objectId}`,
      `sysname ${SYS.name}`,
      `override .1.3.6.1.2.1.47.1.1.1.1.13.1 octet_str "${SYS.chassis}"`,
      `pass_persist .1.3.6.1.4.1.9.9.43.1.1.1 /bin/sh ${join(dir, "ccm.sh")}`,
      "",
    ].join("\n"),
  );
  // SNMP_PERSISTENT_DIR keeps snmpd's state out of /var/lib/snmp; empty MIBS/MIBDIRS spare it loading MIB files.
  const env = { SNMP_PERSISTENT_DIR: join(dir, "persist"), MIBS: "", MIBDIRS: dir };
  const snmpd: Spawned = start(
    SNMPD,
    ["-f", "-Lo", "-C", "-c", join(dir, "snmpd.conf"), "-p", join(dir, "snmpd.pid"), `udp:127.0.0.1:${port}`],
    env,
    dir,
  );
  await failWithOutput(
    snmpd,
    until(
      "snmpd to start",
      () => {
        if (snmpd.child.exitCode !== null) throw new Error(`snmpd exited (${snmpd.child.exitCode})`);
        return /NET-SNMP version/.test(snmpd.output());
      },
      Boolean,
      { tries: 200, everyMs: 50 },
    ),
  );
  // snmpd saves its persistent state as it exits: wait for that, or it re-creates the temp dir after we remove it.
  const stop = async () => {
    stopGroup(snmpd);
    await Promise.race([snmpd.exited, new Promise((r) => setTimeout(r, 5_000))]);
  };
  return { port, setConfigChanged: (ticks) => writeFileSync(valueFile, `${ticks}\n`), stop, output: snmpd.output };
}

/** A Cisco IOS switch over SSH, enough for the built-in cisco-ios template: one fixed configuration. */
function fakeCisco(): Promise<FakeDevice> {
  const prompt = `\r\n${SYS.name}#`;
  const outputs: Record<string, string> = {
    "terminal length 0": "",
    "terminal width 0": "",
    "show running-config":
      "hostname lab-sw-01\r\n!\r\ninterface Vlan1\r\n ip address 192.0.2.10 255.255.255.0\r\n!\r\nend",
    "show version": "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E8",
    "show vtp status": "VTP Operating Mode                : Transparent",
    "show inventory": `NAME: "1", DESCR: "WS-C2960X-48FPD-L"\r\nPID: ${SYS.chassis}  , VID: V07  , SN: FOC0000X0XX`,
  };
  return startFakeDevice({
    auth: LOGIN,
    initPrompt: `${SYS.name}#`,
    script: (line) => {
      if (line === "exit") return { answer: "exit\r\n", close: true };
      const output = outputs[line];
      return output === undefined ? undefined : `${line}\r\n${output}${output ? prompt : prompt.slice(2)}`;
    },
  });
}

describe.skipIf(unavailable)("collector SNMP step against net-snmp's snmpd", () => {
  let t: TestContext;
  let admin: string;
  let dir: string;
  let agent: Snmpd;
  let ciscoIos: number;
  let v2c: number;
  let v3: number;
  let closedPort: number;
  let counter = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "netkeep-snmpd-"));
    agent = await startSnmpd(dir);
    t = await createTestContext();
    admin = await t.token();
    ciscoIos = await builtinTemplateId(t, "cisco-ios");
    closedPort = await freePort();
    v2c = await credential({ snmp_community: COMMUNITY });
    v3 = await credential({
      snmp_v3_user: V3.user,
      snmp_v3_auth_protocol: "SHA-256",
      snmp_v3_auth_password: V3.auth,
      snmp_v3_priv_protocol: "AES-128",
      snmp_v3_priv_password: V3.priv,
    });
  });

  afterAll(async () => {
    await agent?.stop();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function credential(snmp: Record<string, unknown>): Promise<number> {
    const res = await t.call("/api/v1/device-credentials", {
      method: "POST",
      token: admin,
      body: {
        cred_name: `snmp-cred-${++counter}`,
        cred_username: LOGIN.username,
        cred_password: LOGIN.password,
        ...snmp,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  }

  /**
   * A device whose SSH port is closed (a download that logs in fails) unless `sshPort` says otherwise.
   * `vendorless`: as a device saved before vendors were required is, the only kind SNMP fills a vendor in for.
   */
  async function device(options: {
    credId: number;
    snmpPort?: unknown;
    sshPort?: number;
    templateId?: number;
    extra?: Record<string, unknown>;
    vendorless?: boolean;
  }): Promise<number> {
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: `snmp-dev-${++counter}`,
        device_ip: "127.0.0.1",
        device_vendor: "Cisco",
        device_port_override: options.sshPort ?? closedPort,
        device_template_id: options.templateId ?? ciscoIos,
        device_cred_id: options.credId,
        custom: { snmp_port: options.snmpPort ?? agent.port },
        ...options.extra,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    if (options.vendorless) await t.db.update(devices).set({ vendorId: null }).where(eq(devices.id, res.body.data.id));
    return res.body.data.id;
  }

  const shown = async (id: number) => (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
  const row = async (id: number) => (await t.db.select().from(devices).where(eq(devices.id, id)))[0]!;
  const stored = (id: number) => t.db.select().from(configs).where(eq(configs.deviceId, id)).orderBy(configs.command);
  const snmpOf = (job: { result: Record<string, unknown> | null }) =>
    job.result?.snmp as Record<string, any> | undefined;
  const why = (job: { outcome: string | null; message: string | null; result: unknown }) =>
    `${job.outcome}: ${job.message}\n${JSON.stringify(job.result)}\n--- snmpd said:\n${agent.output().slice(-1500)}`;

  it("v2c: reads the system group, fills the empty model and vendor, and the download still goes on", async () => {
    const id = await device({ credId: v2c, vendorless: true });
    const job = await downloadOnce(t, id);
    // The SSH port is closed: the download was attempted (nothing was stored yet, so nothing could be skipped).
    expect(job.outcome, why(job)).toBe("unreachable");
    expect(snmpOf(job)).toMatchObject({
      version: "2c",
      port: agent.port,
      sys_descr: SYS.descr,
      sys_object_id: SYS.objectId,
      sys_name: SYS.name,
      vendor: "Cisco",
      model: SYS.chassis,
      software_version: "15.2(7)E8",
      filled: { vendor: "Cisco", model: SYS.chassis },
      config_change: {
        oid: CCM_OID,
        value: "4242",
        previous: null,
        verdict: "no value recorded at an earlier download",
      },
    });
    expect(snmpOf(job)!.sys_uptime_s).toBeGreaterThanOrEqual(0);
    expect(await shown(id)).toMatchObject({ device_vendor: "Cisco", device_model: SYS.chassis });
    // A change to a device's fields is a device.updated event, whoever makes it (webhooks and mail read the outbox).
    const updates = (await t.db.select().from(events).where(eq(events.deviceId, id))).filter(
      (e) => e.type === "device.updated",
    );
    expect(updates.map((e) => (e.payload as { changed: string[] }).changed)).toEqual([
      ["device_vendor", "device_vendor_id", "device_model"],
    ]);
    // Only a successful download records the value it started from.
    expect((await row(id)).snmpConfigChangedValue).toBeNull();
  });

  it("detect: a device whose CLI no template knows is recognised by its sysDescr, its model read from ENTITY-MIB", async () => {
    const silent = await startFakeDevice({
      auth: LOGIN,
      initPrompt: `${SYS.name}#`,
      script: (line) => (line === "exit" ? { answer: "exit\r\n", close: true } : undefined),
    });
    try {
      const id = await device({ credId: v2c, sshPort: silent.port, extra: { device_template_id: null } });
      const queued = await t.call(`/api/v1/devices/${id}/detect`, {
        method: "POST",
        token: admin,
        body: { apply: true },
      });
      expect(queued.status).toBe(202);
      const job = (await claimNextJob(t.db, "test-collector", new Date(), 60_000))!;
      await runDetectJob(
        {
          db: t.db,
          secrets: t.secrets,
          clock: { now: () => new Date() },
          logger: silentLogger,
          owner: "test-collector",
          limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 5_000, optionalIdleTimeoutMs: 1_000 },
          connectTimeoutMs: 5_000,
        },
        job,
        new AbortController().signal,
      );
      const done = (await getJob(t.db, job.id))!;
      expect(done.outcome, why(done)).toBe("success");
      expect(done.result).toMatchObject({
        snmp: { sys_descr: SYS.descr, sys_object_id: SYS.objectId },
        proposal: {
          template: "cisco-ios",
          vendor: "Cisco",
          model: SYS.chassis,
          os_version: "15.2(7)E8",
          matched_by: ["sys_descr", "sys_object_id", "prompt"],
        },
        applied: true,
      });
      expect(await shown(id)).toMatchObject({ device_template_id: ciscoIos, device_model: SYS.chassis });
    } finally {
      await silent.close();
    }
  });

  it("v3 authPriv (SHA-256, AES-128) reads it too, and keeps a model the user set", async () => {
    const id = await device({ credId: v3, extra: { device_model: "core switch, stack of 2" }, vendorless: true });
    const job = await downloadOnce(t, id);
    expect(snmpOf(job), why(job)).toMatchObject({
      version: "3",
      sys_name: SYS.name,
      model: SYS.chassis,
      filled: { vendor: "Cisco" },
    });
    expect(snmpOf(job)!.filled).not.toHaveProperty("model");
    expect(await shown(id)).toMatchObject({ device_vendor: "Cisco", device_model: "core switch, stack of 2" });
  });

  it("skips the login while the config-change OID stands still, and logs in again once it moves", async () => {
    const fake = await fakeCisco();
    try {
      agent.setConfigChanged(5000);
      const id = await device({ credId: v2c, sshPort: fake.port });

      const first = await downloadOnce(t, id);
      expect(first.outcome, why(first)).toBe("success");
      expect(fake.sessions).toBe(1);
      expect(fake.unexpected).toEqual([]);
      expect(await row(id)).toMatchObject({ snmpConfigChangedValue: "5000" });
      const before = await stored(id);
      expect(before.map((c) => c.command)).toEqual([...CISCO_COMMANDS].sort());

      // From here a login would fail: only SNMP can make the next download come out "unchanged".
      await t.call(`/api/v1/devices/${id}`, {
        method: "PATCH",
        token: admin,
        body: { device_port_override: closedPort },
      });
      const skipped = await downloadOnce(t, id);
      expect(skipped.outcome, why(skipped)).toBe("unchanged");
      expect(skipped.message).toBe("unchanged, verified by SNMP");
      expect(skipped.result).toMatchObject({
        verified_by: "snmp",
        config_ids: expect.arrayContaining(before.map((c) => c.id)),
      });
      expect(snmpOf(skipped)!.config_change).toEqual({
        oid: CCM_OID,
        value: "5000",
        previous: "5000",
        verdict: "unchanged since the last download",
      });
      expect(fake.sessions).toBe(1);
      const after = await stored(id);
      expect(after.map((c) => c.seenCount)).toEqual([2, 2, 2, 2]);
      for (const [i, c] of after.entries())
        expect(c.lastSeenAt.getTime()).toBeGreaterThanOrEqual(before[i]!.lastSeenAt.getTime());
      expect(await shown(id)).toMatchObject({ status: "up" });

      // Someone configured the switch: the OID moved, so the collector logs in (and finds the SSH port closed).
      agent.setConfigChanged(7321);
      const moved = await downloadOnce(t, id);
      expect(moved.outcome, why(moved)).toBe("unreachable");
      expect(snmpOf(moved)!.config_change).toMatchObject({
        value: "7321",
        previous: "5000",
        verdict: "changed since the last download",
      });
      expect(await row(id)).toMatchObject({ snmpConfigChangedValue: "5000" });

      await t.call(`/api/v1/devices/${id}`, {
        method: "PATCH",
        token: admin,
        body: { device_port_override: fake.port },
      });
      const again = await downloadOnce(t, id);
      expect(again.outcome, why(again)).toBe("unchanged");
      expect(again.message).toBe("no configuration change");
      expect(fake.sessions).toBe(2);
      expect(await row(id)).toMatchObject({ snmpConfigChangedValue: "7321" });
    } finally {
      await fake.close();
    }
  });

  it("does not skip while a command has no stored version, nor after the device restarted", async () => {
    agent.setConfigChanged(9100);
    const id = await device({ credId: v2c });
    // The last stored version, made directly: as if a download had stored it along with the value 9100.
    const store = (command: string) =>
      storeConfig(t.db, {
        deviceId: id,
        command,
        text: `${command} output\n`,
        significant: (s) => s,
        trigger: "api",
        jobId: null,
        now: new Date(),
      });
    await store("show running-config");
    await t.db
      .update(devices)
      .set({ snmpConfigChangedValue: "9100", snmpConfigChangedAt: new Date() })
      .where(eq(devices.id, id));

    const partial = await downloadOnce(t, id);
    expect(partial.outcome, why(partial)).toBe("unreachable");
    expect(snmpOf(partial)!.config_change.verdict).toBe('unchanged, but nothing is stored yet for "show version"');

    for (const command of CISCO_COMMANDS.slice(1)) await store(command);
    const skipped = await downloadOnce(t, id);
    expect(skipped.outcome, why(skipped)).toBe("unchanged");
    expect(skipped.message).toBe("unchanged, verified by SNMP");

    // Read two hours ago, but the agent has been up for seconds: the counter restarted, an equal value proves nothing.
    await t.db
      .update(devices)
      .set({ snmpConfigChangedAt: new Date(Date.now() - 2 * 3600_000) })
      .where(eq(devices.id, id));
    const restarted = await downloadOnce(t, id);
    expect(restarted.outcome, why(restarted)).toBe("unreachable");
    expect(snmpOf(restarted)!.config_change.verdict).toMatch(/restarted since the last download/);
  });

  it("a template's snmp.port is the default; a device's snmp_port attribute wins", async () => {
    // The port goes under the template's own snmp: section, wherever that stands in the file.
    const withSnmpPort = (yaml: string, port: number) => yaml.replace(/^snmp:\n/m, `snmp:\n  port: ${port}\n`);
    const code = readFileSync(new URL("../../collector/templates/cisco-ios.yaml", import.meta.url), "utf8");
    const bad = await t.call("/api/v1/templates", {
      method: "POST",
      token: admin,
      body: { name: "ios-snmp-bad", code: withSnmpPort(code, 0) },
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(["code.snmp.port"]);
    const res = await t.call("/api/v1/templates", {
      method: "POST",
      token: admin,
      body: { name: "ios-snmp-port", code: withSnmpPort(code, agent.port) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);

    const viaTemplate = await device({ credId: v2c, templateId: res.body.data.id, snmpPort: null });
    const job = await downloadOnce(t, viaTemplate);
    expect(snmpOf(job), why(job)).toMatchObject({ port: agent.port, sys_name: SYS.name });
  });

  it("a wrong community, a wrong v3 password, a silent agent or a bad port attribute never fail a download", async () => {
    const fake = await fakeCisco();
    try {
      const silentPort = await freePort();
      const wrongV3 = await credential({
        snmp_v3_user: V3.user,
        snmp_v3_auth_protocol: "sha256",
        snmp_v3_auth_password: "not-the-password",
        snmp_v3_priv_protocol: "aes",
        snmp_v3_priv_password: V3.priv,
      });
      const cases = [
        {
          credId: await credential({ snmp_community: "not-the-community" }),
          snmpPort: agent.port,
          error: /^no answer from 127\.0\.0\.1:\d+ within 2000 ms \(2 tries; wrong community, or no agent listening\)$/,
        },
        { credId: wrongV3, snmpPort: agent.port, error: /^SNMP request failed: .*(?:Wrong Digest|incorrect password)/ },
        {
          credId: v2c,
          snmpPort: silentPort,
          error: new RegExp(`^no answer from 127\\.0\\.0\\.1:${silentPort} within`),
        },
        {
          credId: v2c,
          snmpPort: "161x",
          error: /^custom attribute snmp_port must be a port number from 1 to 65535, not "161x"$/,
        },
      ];
      for (const c of cases) {
        const id = await device({ credId: c.credId, snmpPort: c.snmpPort, sshPort: fake.port, vendorless: true });
        const job = await downloadOnce(t, id);
        expect(job.outcome, why(job)).toBe("success");
        expect(snmpOf(job)!.error).toMatch(c.error);
        expect(snmpOf(job)).not.toHaveProperty("sys_name");
        expect(await shown(id)).toMatchObject({ device_vendor: null, device_model: "" });
        expect(await row(id)).toMatchObject({ snmpConfigChangedValue: null });
      }
      expect(fake.unexpected).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("leaves a device without SNMP settings alone", async () => {
    const plain = await credential({});
    const id = await device({ credId: plain });
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("unreachable");
    expect(job.result).not.toHaveProperty("snmp");
  });
});
