import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDetectJob } from "../../collector/detect-job.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { claimNextJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { eq } from "drizzle-orm";
import { events } from "../../src/db/schema/index.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { builtinTemplateId, IOS_CONFIG_COMMAND, iosScript } from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type ScriptAnswer } from "../helpers/fake-device.ts";
import { startFakeTelnet, type FakeTelnet } from "../helpers/fake-telnet.ts";

/**
 * POST /devices/{id}/detect through the real collector job against the fake SSH device: the API queues, the
 * collector logs in with the device's credentials, and the job's result proposes (or sets) the template.
 */

const USERNAME = "netops";
const PASSWORD = "Detect-Test-Pass-2291";
const HOSTNAME = "branch-9";
const SHOW_VERSION = [
  "Cisco IOS XE Software, Version 17.09.04a",
  "Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.9.4a, RELEASE SOFTWARE (fc3)",
  "cisco C9300-48P (X86) processor with 1392369K/6147K bytes of memory.",
];
const { prompt: PROMPT, script: iosAnswer } = iosScript(HOSTNAME, ["hostname branch-9", "end"]);

let t: TestContext;
let admin: string;
const started: (FakeDevice | FakeTelnet)[] = [];

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  await t.close();
});

/** A device with no template (and a vendor with several, so none is chosen for it), on a fake device answering with `script`. */
async function deviceAnswering(script: (line: string) => ScriptAnswer, banner = ""): Promise<number> {
  const device = await startFakeDevice({
    script,
    initPrompt: `${banner}\r\n${PROMPT}`,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
  started.push(device);
  const created = await t.call("/api/v1/devices", {
    method: "POST",
    token: admin,
    body: {
      device_name: `detect-${started.length}`,
      device_ip: "127.0.0.1",
      device_vendor: "Dell",
      device_port_override: device.port,
      device_username: USERNAME,
      device_password: PASSWORD,
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id;
}

const ios = (line: string): ScriptAnswer =>
  line === "show version" ? [line, ...SHOW_VERSION, PROMPT].join("\r\n") : iosAnswer(line);

/** Runs the queued detect job as a collector does, and returns it finished. */
async function runQueued(): Promise<Job> {
  const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
  if (!job) throw new Error("no job to claim");
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
  return (await getJob(t.db, job.id))!;
}

describe("POST /devices/{id}/detect", () => {
  it("proposes the template, vendor, model and OS version, and leaves the device as it was", async () => {
    const id = await deviceAnswering(ios);
    const queued = await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin });
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({ type: "detect", device_id: id, state: "queued" });
    expect(queued.headers.get("location")).toBe(queued.body.data.status_url);

    const job = await runQueued();
    expect(job.id).toBe(queued.body.data.id);
    const done = (await t.call(`/api/v1/jobs/${job.id}`, { token: admin })).body.data;
    expect(done.outcome, done.message).toBe("success");
    expect(done.message).toBe("proposes cisco-ios (Cisco), model C9300-48P, OS 17.09.04a");
    expect(done.result).toMatchObject({
      prompt: PROMPT,
      commands_run: ["show version"],
      applied: false,
      proposal: {
        template_id: await builtinTemplateId(t, "cisco-ios"),
        template: "cisco-ios",
        vendor: "Cisco",
        model: "C9300-48P",
        os_version: "17.09.04a",
        matched_by: ["version", "prompt"],
      },
    });
    const device = (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
    expect(device.device_template_id).toBeNull();
    expect(device.device_model).toBe("");
  });

  it("with apply sets the template, vendor and model, and the activity log says so", async () => {
    const id = await deviceAnswering(ios);
    const queued = await t.call(`/api/v1/devices/${id}/detect`, {
      method: "POST",
      token: admin,
      body: { apply: true },
    });
    expect(queued.status).toBe(202);
    // The same request again reuses the job; another apply for the job under way is refused.
    expect(
      (await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin, body: { apply: true } })).body.data
        .id,
    ).toBe(queued.body.data.id);
    const conflict = await t.call(`/api/v1/devices/${id}/detect`, {
      method: "POST",
      token: admin,
      body: { apply: false },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.message).toBe(
      `A detection with apply true is already queued for device ${id} (job ${queued.body.data.id}); wait for it to finish`,
    );

    const job = await runQueued();
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.message).toBe("set cisco-ios (Cisco), model C9300-48P, OS 17.09.04a");
    expect(job.result).toMatchObject({ applied: true });
    const device = (await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data;
    expect(device).toMatchObject({
      device_template_id: await builtinTemplateId(t, "cisco-ios"),
      device_model: "C9300-48P",
      device_vendor: "Cisco",
    });
    // A change to a device's fields is a device.updated event, whoever makes it (webhooks and mail read the outbox).
    const updates = (await t.db.select().from(events).where(eq(events.type, "device.updated"))).filter(
      (e) => e.deviceId === id,
    );
    expect(updates.map((e) => e.payload)).toEqual([
      {
        device: { id, name: device.device_name, ip: "127.0.0.1", category_id: null, tag_ids: [] },
        changed: ["device_template_id", "device_vendor", "device_vendor_id", "device_model"],
      },
    ]);
    const log = (await t.call(`/api/v1/activity-logs?filter[action]=device.detect_apply`, { token: admin })).body.data;
    expect(log.find((e: { subject_id: number }) => e.subject_id === id)).toMatchObject({
      username: `template detection (job ${job.id})`,
      changes: {
        device_template_id: { old: null, new: await builtinTemplateId(t, "cisco-ios") },
        device_model: { old: "", new: "C9300-48P" },
      },
    });
  });

  it("tries other families' version commands when the first gives nothing it knows", async () => {
    const vrp = (line: string): ScriptAnswer => {
      if (line === "display version")
        return [
          line,
          "Huawei Versatile Routing Platform Software",
          "VRP (R) software, Version 8.180 (CE6850 V200R005C10SPC800)",
          "HUAWEI CE6850-48S6Q-HI uptime is 2 weeks",
          PROMPT,
        ].join("\r\n");
      if (line === "exit") return { answer: "exit\r\n", close: true };
      return [line, "% Unrecognized command", PROMPT].join("\r\n");
    };
    const id = await deviceAnswering(vrp);
    await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.result).toMatchObject({
      proposal: {
        template: "huawei-vrp",
        vendor: "Huawei",
        model: "CE6850-48S6Q-HI",
        os_version: "8.180 (CE6850 V200R005C10SPC800)",
      },
    });
    expect((job.result!.commands_run as string[]).at(-1)).toBe("display version");
  });

  it("enters enable mode when the credentials carry an enable password, before asking for the version", async () => {
    const ENABLE_PASSWORD = "Detect-Enable-7731";
    // Like many devices, this one prints nothing useful in user mode: its version needs enable.
    const userModeOnly = () => {
      let enabled = false;
      let askedPassword = false;
      return (line: string): ScriptAnswer => {
        if (askedPassword) {
          askedPassword = false;
          enabled = line === ENABLE_PASSWORD;
          return `\r\n${enabled ? "branch-9#" : "% Access denied\r\nbranch-9>"}`;
        }
        if (line === "enable") return ((askedPassword = true), "enable\r\nPassword: ");
        if (line === "show version" && enabled) return [line, ...SHOW_VERSION, "branch-9#"].join("\r\n");
        if (line === "exit") return { answer: "exit\r\n", close: true };
        return [line, "% Invalid input detected at '^' marker.", enabled ? "branch-9#" : "branch-9>"].join("\r\n");
      };
    };
    const device = async (enablePassword?: string) => {
      const fake = await startFakeDevice({
        script: userModeOnly(),
        initPrompt: "\r\nbranch-9>",
        auth: { username: USERNAME, password: PASSWORD },
      });
      started.push(fake);
      const created = await t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: {
          device_name: `detect-enable-${started.length}`,
          device_ip: "127.0.0.1",
          device_vendor: "Dell",
          device_port_override: fake.port,
          device_username: USERNAME,
          device_password: PASSWORD,
          ...(enablePassword ? { device_enable_password: enablePassword } : {}),
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await t.call(`/api/v1/devices/${created.body.data.id}/detect`, { method: "POST", token: admin });
      return { fake, job: await runQueued() };
    };

    const { fake, job } = await device(ENABLE_PASSWORD);
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.result).toMatchObject({
      enabled: true,
      proposal: { template: "cisco-ios", model: "C9300-48P", os_version: "17.09.04a" },
    });
    expect(fake.received.slice(0, 3)).toEqual(["enable\n", `${ENABLE_PASSWORD}\n`, "show version\n"]);
    expect(JSON.stringify(job.result)).not.toContain(ENABLE_PASSWORD);

    // Without an enable password the same device shows nothing to recognise, and is not sent "enable".
    const plain = await device();
    expect(plain.job.outcome).toBe("error");
    expect(plain.job.result).toMatchObject({ enabled: false, proposal: null });
    expect(plain.fake.received).not.toContain("enable\n");
  });

  const telnetSkip = process.getuid?.() === 0 ? undefined : "not running as root: the fake Telnet device needs port 23";
  if (telnetSkip) {
    if (process.env.CI) throw new Error(telnetSkip);
    console.warn(`SKIPPED detect.test.ts Telnet fallback: ${telnetSkip}`);
  }
  it.skipIf(telnetSkip !== undefined)("falls back to Telnet on port 23 when the device refuses SSH", async () => {
    // An address of its own in 127.0.0.0/8: nothing listens on its port 22, so SSH is refused.
    const host = `127.${40 + (process.pid % 200)}.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;
    const telnet = await startFakeTelnet({
      host,
      port: 23,
      auth: { username: USERNAME, password: PASSWORD },
      initPrompt: `\r\n${PROMPT}`,
      script: (line) =>
        line === "show version"
          ? [line, ...SHOW_VERSION, PROMPT].join("\r\n")
          : line === "exit"
            ? { answer: "exit\r\n", close: true }
            : [line, "% Invalid input", PROMPT].join("\r\n"),
    });
    started.push(telnet);
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "detect-telnet-only",
        device_ip: host,
        device_vendor: "Dell",
        device_username: USERNAME,
        device_password: PASSWORD,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.call(`/api/v1/devices/${created.body.data.id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome, `${job.message} ${JSON.stringify(job.result)}`).toBe("success");
    expect(job.result).toMatchObject({ protocol: "telnet", proposal: { template: "cisco-ios", model: "C9300-48P" } });
    expect(telnet.logins).toBe(1);
    expect(telnet.received[0]).toBe("show version");
  });

  it("proposes nothing for a device no built-in recognises, and says why", async () => {
    const id = await deviceAnswering((line) =>
      line === "exit" ? { answer: "exit\r\n", close: true } : [line, "% Unknown command", PROMPT].join("\r\n"),
    );
    await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin, body: { apply: true } });
    const job = await runQueued();
    expect(job.outcome).toBe("error");
    expect(job.message).toBe(
      "no built-in template recognised what the device printed; the result shows the banner, prompt and commands run",
    );
    expect(job.result).toMatchObject({ proposal: null, candidates: [], applied: false });
    expect((await t.call(`/api/v1/devices/${id}`, { token: admin })).body.data.device_template_id).toBeNull();
  });

  it("a failed detection keeps its last lines with the login's secrets and the templates' secret rules masked, as a failed download does", async () => {
    // A device that echoes what it was sent and prints configuration, but never a prompt: the session fails with what it printed last.
    const device = await startFakeDevice({
      script: () => "",
      initPrompt: `Password: ${PASSWORD}\r\nsnmp-server community Detect-Community-93 RO\r\nWaiting`,
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "detect-silent",
        device_ip: "127.0.0.1",
        device_vendor: "Dell",
        device_port_override: device.port,
        device_username: USERNAME,
        device_password: PASSWORD,
      },
    });
    await t.call(`/api/v1/devices/${created.body.data.id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome).not.toBe("success");
    const lines = job.result!.last_lines as string[];
    expect(lines).toContain("Password: <secret hidden>");
    expect(lines.find((l) => l.startsWith("snmp-server community"))).toMatch(/^snmp-server community <secret \w+> RO$/);
    const shown = JSON.stringify((await t.call(`/api/v1/jobs/${job.id}`, { token: admin })).body);
    expect(shown).not.toContain(PASSWORD);
    expect(shown).not.toContain("Detect-Community-93");
  }, 30_000);

  /** A device that refuses a shell and exec channels and serves only the `netconf` subsystem, its hello offering `capabilities`. */
  async function netconfOnlyDevice(capabilities: string[]): Promise<number> {
    const device = await startFakeDevice({
      netconf: { config: "<configuration/>", capabilities },
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: `detect-nc-${started.length}`,
        device_ip: "127.0.0.1",
        device_vendor: "Dell",
        device_port_override: device.port,
        device_username: USERNAME,
        device_password: PASSWORD,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.id;
  }

  it("proposes the vendor's NETCONF template for a device that refuses a shell and offers the netconf subsystem, by its hello's capabilities", async () => {
    const id = await netconfOnlyDevice([
      "http://xml.juniper.net/netconf/junos/1.0",
      "http://xml.juniper.net/dmi/system/1.0",
      "http://openconfig.net/yang/interfaces?module=openconfig-interfaces",
    ]);
    await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.message).toBe("proposes juniper-junos-netconf (Juniper)");
    expect(job.result).toMatchObject({
      protocol: "netconf",
      channels: "netconf",
      proposal: {
        template_id: await builtinTemplateId(t, "juniper-junos-netconf"),
        template: "juniper-junos-netconf",
        vendor: "Juniper",
        matched_by: ["netconf_capability"],
      },
    });
    expect(job.result!.netconf_capabilities).toContain("http://xml.juniper.net/netconf/junos/1.0");

    // Another vendor's markers, applied: the device gets that template.
    const arista = await netconfOnlyDevice([
      "http://arista.com/yang/experimental/eos?module=arista-exp-eos",
      "http://openconfig.net/yang/interfaces?module=openconfig-interfaces",
    ]);
    await t.call(`/api/v1/devices/${arista}/detect`, { method: "POST", token: admin, body: { apply: true } });
    const applied = await runQueued();
    expect(applied.message).toBe("set arista-eos-netconf (Arista)");
    const device = (await t.call(`/api/v1/devices/${arista}`, { token: admin })).body.data;
    expect(device.device_template_id).toBe(await builtinTemplateId(t, "arista-eos-netconf"));
  }, 30_000);

  it("names each other NETCONF template, and only it, from its vendor's capabilities", async () => {
    const families: [string, string][] = [
      [
        "cisco-iosxe-netconf",
        "http://cisco.com/ns/yang/Cisco-IOS-XE-native?module=Cisco-IOS-XE-native&revision=2023-03-01",
      ],
      [
        "cisco-nxos-netconf",
        "http://cisco.com/ns/yang/cisco-nx-os-device?revision=2023-03-16&module=Cisco-NX-OS-device",
      ],
      ["huawei-vrp-netconf", "http://www.huawei.com/netconf/vrp/huawei-ifm?module=huawei-ifm&revision=2020-03-06"],
      ["nokia-sros-netconf", "urn:nokia.com:sros:ns:yang:sr:conf?module=nokia-conf&revision=2023-05-01"],
    ];
    for (const [key, capability] of families) {
      const id = await netconfOnlyDevice([
        capability,
        "http://openconfig.net/yang/interfaces?module=openconfig-interfaces",
      ]);
      await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin });
      const job = await runQueued();
      const result = job.result as { proposal?: { template: string }; candidates?: { template: string }[] };
      expect(result.proposal?.template, `${key}: ${job.message}`).toBe(key);
      expect(
        result.candidates?.map((c) => c.template),
        key,
      ).toEqual([key]);
    }
  }, 60_000);

  it("names linux-generic for a Linux shell, by uname -a, after the network families' commands find nothing", async () => {
    const prompt = "backup@edge-01:~$ ";
    const linux = (line: string): ScriptAnswer => {
      if (line === "uname -a")
        return `${line}\r\nLinux edge-01 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64\r\n${prompt}`;
      if (line === "exit") return { answer: "logout\r\n", close: true };
      return `${line}\r\n-bash: ${line.split(" ")[0]}: command not found\r\n${prompt}`;
    };
    const device = await startFakeDevice({
      script: linux,
      initPrompt: `Linux edge-01 6.1.0-18-amd64 x86_64\r\n\r\nLast login: Mon Jun  1 09:12:44 2026\r\n${prompt}`,
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "detect-linux-1",
        device_ip: "127.0.0.1",
        device_vendor: "Dell",
        device_port_override: device.port,
        device_username: USERNAME,
        device_password: PASSWORD,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.call(`/api/v1/devices/${created.body.data.id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome, `${job.message} ${JSON.stringify(job.result)}`).toBe("success");
    expect(job.result).toMatchObject({
      proposal: { template: "linux-generic", vendor: "Linux", os_version: "6.1.0-18-amd64" },
    });
    expect((job.result as { candidates: { template: string }[] }).candidates.map((c) => c.template)).toEqual([
      "linux-generic",
    ]);
  }, 30_000);

  it("proposes nothing for a NETCONF-only device whose capabilities no template names", async () => {
    const id = await netconfOnlyDevice(["http://openconfig.net/yang/interfaces?module=openconfig-interfaces"]);
    await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin });
    const job = await runQueued();
    expect(job.outcome).toBe("error");
    expect(job.message).toBe(
      "no built-in template recognised what the device printed; the result shows the banner, prompt and commands run",
    );
    expect(job.result).toMatchObject({ channels: "netconf", proposal: null });
  }, 30_000);

  it("answers 404 for a device that does not exist or is outside the caller's scope, and needs devices.write", async () => {
    const id = await deviceAnswering(ios);
    expect((await t.call("/api/v1/devices/999999/detect", { method: "POST", token: admin })).status).toBe(404);
    await t.role({ name: "detect-scoped", tags: ["elsewhere"] });
    const scoped = await t.token(undefined, { role: "detect-scoped" });
    expect((await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: scoped })).status).toBe(404);
    // A misspelt field is refused, not ignored: {"aply": true} would otherwise detect without applying.
    const typo = await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: admin, body: { aply: true } });
    expect(typo.status).toBe(422);
    expect(JSON.stringify(typo.body.errors)).toContain("aply");
    const reader = await t.token(["devices.read"]);
    expect((await t.call(`/api/v1/devices/${id}/detect`, { method: "POST", token: reader })).status).toBe(403);
  });
});
