import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { devices } from "../src/db/schema/index.ts";
import { parseTemplate, type ConnectionTemplate } from "../src/modules/templates/template-schema.ts";
import { startConfigDevice, type ConfigDevice, type ConfigDeviceOptions } from "../test/helpers/config-device.ts";
import type { Login, Target } from "./collect.ts";
import { linesNotInConfig, pushLines, type PushRequest } from "./push.ts";
import { DEFAULT_LIMITS } from "./session.ts";

/** Pushes through the built-in templates to fake devices that really apply what they are sent (config-device.ts). */

const USERNAME = "netkeep";
const PASSWORD = "s3cret-Pa55";
const running = [
  "hostname edge-1",
  "interface Vlan20",
  " ip address 192.0.2.20 255.255.255.0",
  "username ops privilege 15 secret 0 hunter2hunter2",
];

const devicesStarted: ConfigDevice[] = [];
afterEach(async () => {
  await Promise.all(devicesStarted.splice(0).map((d) => d.close()));
});

function builtin(key: string): ConnectionTemplate {
  const parsed = parseTemplate(readFileSync(new URL(`./templates/${key}.yaml`, import.meta.url), "utf8"));
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  return parsed.template;
}

async function device(options: Partial<ConfigDeviceOptions> = {}): Promise<ConfigDevice> {
  const started = await startConfigDevice({
    flavor: "ios",
    hostname: "edge-1",
    running,
    auth: { username: USERNAME, password: PASSWORD },
    ...options,
  });
  devicesStarted.push(started);
  return started;
}

/** The network half needs only where to connect: the rest of a device row does not matter to a push. */
function targetOf(
  fake: ConfigDevice,
  template: ConnectionTemplate,
  login: Login = { username: USERNAME, password: PASSWORD },
): Target {
  return {
    device: { ip: fake.host, portOverride: fake.port, hostKeyFingerprint: null } as typeof devices.$inferSelect,
    template,
    login,
  };
}

const push = (target: Target, request: PushRequest) =>
  pushLines(
    { target, limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 5_000 }, connectTimeoutMs: 5_000 },
    request,
    new AbortController().signal,
    { connected: false },
  );

describe("push to an IOS device (built-in cisco-ios template)", () => {
  it("applies every line, saves, and the device's running and startup configurations hold them", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), {
      lines: ["interface Vlan20", " description uplink to core", "exit", "ntp server 192.0.2.123"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.running).toEqual([
      "hostname edge-1",
      "interface Vlan20",
      " ip address 192.0.2.20 255.255.255.0",
      " description uplink to core",
      "username ops privilege 15 secret 0 hunter2hunter2",
      "ntp server 192.0.2.123",
    ]);
    expect(fake.state.startup).toEqual(fake.state.running);
    expect(outcome.transcript).toContain("> ntp server 192.0.2.123\n");
  });

  it("stops at a refused line: nothing after it is sent, nothing is saved, and the result names the line and the answer", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), {
      lines: ["ntp server 192.0.2.123", "ntp sever 192.0.2.124", "logging host 192.0.2.50"],
      save: true,
    });
    expect(outcome.status).toBe("failed");
    expect(outcome.saved).toBe(false);
    expect(outcome.failedLine).toMatchObject({ index: 1, stage: "line", line: "ntp sever 192.0.2.124" });
    expect(outcome.failedLine!.answer).toContain("% Invalid input detected at '^' marker.");
    expect(outcome.message).toContain("line 2 'ntp sever 192.0.2.124'");
    expect(fake.state.configLines).not.toContain("logging host 192.0.2.50");
    // The line before the failure is in the running configuration (IOS applies at once), never in the startup one.
    expect(fake.state.running).toContain("ntp server 192.0.2.123");
    expect(fake.state.startup).toEqual(running);
  });

  it("runs the rollback lines when the push fails, and still saves nothing", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), {
      lines: ["ntp server 192.0.2.123", "bogus-command"],
      rollbackLines: ["no ntp server 192.0.2.123"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", rolledBack: true, saved: false });
    expect(fake.state.running).toEqual(running);
    expect(fake.state.startup).toEqual(running);
    expect(outcome.transcript).toContain("> no ntp server 192.0.2.123\n");
  });

  it("answers [confirm] and the change is applied", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), { lines: ["no username ops"], save: true });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.startup.some((l) => l.startsWith("username ops"))).toBe(false);
  });

  it("a check (save false) leaves configuration mode without saving", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), {
      lines: ["ntp server 192.0.2.123"],
      save: false,
    });
    expect(outcome).toMatchObject({ status: "success", saved: false });
    expect(fake.state.startup).toEqual(running);
    expect(fake.received.map((l) => l.trim())).not.toContain("write memory");
  });

  it("masks secrets in the transcript and in the failed line: template secret rules and the login's passwords", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), {
      lines: ["username backup privilege 15 secret 0 Top-Secret-99", `bogus ${PASSWORD}`],
      save: true,
    });
    expect(outcome.status).toBe("failed");
    expect(outcome.transcript).toContain("username backup privilege 15 secret 0 <secret hidden>");
    for (const text of [outcome.transcript, outcome.message, outcome.failedLine!.line, outcome.failedLine!.answer]) {
      expect(text).not.toContain("Top-Secret-99");
      expect(text).not.toContain(PASSWORD);
    }
  });

  it("flags a line taken that does not show up in the configuration afterwards, not the mode changes or negations", async () => {
    const fake = await device();
    const lines = [
      "ip domain-name example.net",
      "interface Vlan20",
      " description core",
      "exit",
      "no ntp server 192.0.2.9",
      "ntp server 192.0.2.1",
    ];
    const outcome = await push(targetOf(fake, builtin("cisco-ios")), { lines, save: true });
    expect(outcome.status).toBe("success");
    const after = fake.state.running.join("\n");
    expect(linesNotInConfig(builtin("cisco-ios"), lines, after)).toEqual(["ip domain-name example.net"]);
    // Junos shows its configuration in another form than set lines: nothing is flagged there.
    expect(linesNotInConfig(builtin("juniper-junos"), ["set system ntp server 192.0.2.1"], after)).toEqual([]);
  });

  it("a connection failure is an error with its outcome, not a throw", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-ios"), { username: USERNAME, password: "wrong" }), {
      lines: ["ntp server 192.0.2.1"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "error", outcome: "auth_failed", saved: false });
    expect(fake.state.configLines).toEqual([]);
  });

  it("a template without a push section is refused before connecting", async () => {
    const fake = await device();
    const outcome = await push(targetOf(fake, builtin("cisco-asa")), { lines: ["ntp server 192.0.2.1"], save: true });
    expect(outcome).toMatchObject({ status: "error", saved: false });
    expect(outcome.message).toContain("no push section");
    expect(fake.sessions).toBe(0);
  });
});

describe("push to a Junos device (built-in juniper-junos template: candidate and commit)", () => {
  const junos = ["set system host-name core-1", "set interfaces ge-0/0/0 unit 0 family inet address 192.0.2.1/24"];

  it("commits the candidate with commit confirmed, then confirms it", async () => {
    const fake = await device({ flavor: "junos", hostname: "core-1", running: junos });
    const outcome = await push(targetOf(fake, builtin("juniper-junos")), {
      lines: ["set system ntp server 192.0.2.123", "delete interfaces ge-0/0/0"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.running).toEqual(["set system host-name core-1", "set system ntp server 192.0.2.123"]);
    expect(fake.state.commits).toBe(2);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("a refused commit discards the candidate: the running configuration is unchanged", async () => {
    const fake = await device({ flavor: "junos", hostname: "core-1", running: junos });
    const outcome = await push(targetOf(fake, builtin("juniper-junos")), {
      lines: ["set protocols bgp group upstream neighbor 198.51.100.1"],
      save: true,
    });
    expect(outcome).toMatchObject({
      status: "failed",
      saved: false,
      failedLine: { stage: "save", index: -1, line: "commit confirmed 5" },
    });
    expect(outcome.failedLine!.answer).toContain("peer-as not configured");
    expect(fake.state.running).toEqual(junos);
    expect(fake.state.commits).toBe(0);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("rollback lines after a failure are committed there, and the failed push's lines are not", async () => {
    const fake = await device({ flavor: "junos", hostname: "core-1", running: junos });
    const outcome = await push(targetOf(fake, builtin("juniper-junos")), {
      lines: ["set system ntp server 192.0.2.9", "sett system foo"],
      rollbackLines: ["set system location building-1"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", rolledBack: true, saved: false });
    expect(fake.state.running).toEqual([...junos, "set system location building-1"]);
  });

  it("a syntax error stops the push before the commit", async () => {
    const fake = await device({ flavor: "junos", hostname: "core-1", running: junos });
    const outcome = await push(targetOf(fake, builtin("juniper-junos")), {
      lines: ["set system ntp server 192.0.2.9", "sett system foo", "set system location building-2"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", failedLine: { index: 1, stage: "line" } });
    expect(fake.state.configLines).not.toContain("set system location building-2");
    expect(fake.received.map((l) => l.trim())).not.toContain("commit confirmed 5");
    expect(fake.state.running).toEqual(junos);
  });
});

describe("push to an IOS XR device (built-in cisco-iosxr template: candidate, commit, abort)", () => {
  const xr = ["hostname pe1", "interface Loopback0", " ipv4 address 192.0.2.1 255.255.255.255"];
  const xrDevice = () => device({ flavor: "iosxr", hostname: "pe1", running: xr });

  it("commits the candidate once and leaves configuration mode", async () => {
    const fake = await xrDevice();
    const outcome = await push(targetOf(fake, builtin("cisco-iosxr")), {
      lines: ["interface Loopback0", " description core loopback", "ntp server 192.0.2.123"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.running).toEqual([...xr, " description core loopback", "ntp server 192.0.2.123"]);
    expect(fake.state.commits).toBe(1);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("a check (save false) aborts the candidate: nothing was committed", async () => {
    const fake = await xrDevice();
    const outcome = await push(targetOf(fake, builtin("cisco-iosxr")), {
      lines: ["ntp server 192.0.2.123"],
      save: false,
    });
    expect(outcome).toMatchObject({ status: "success", saved: false });
    expect(fake.state.running).toEqual(xr);
    expect(fake.state.commits).toBe(0);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("a refused commit fails the push at its save step and changes nothing", async () => {
    const fake = await xrDevice();
    const outcome = await push(targetOf(fake, builtin("cisco-iosxr")), {
      lines: ["router bgp 64500", " neighbor 198.51.100.1"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", saved: false, failedLine: { stage: "save", line: "commit" } });
    expect(outcome.failedLine!.answer).toContain("remote-as must be configured");
    expect(fake.state.running).toEqual(xr);
    expect(fake.state.commits).toBe(0);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("an invalid line stops the push before the commit", async () => {
    const fake = await xrDevice();
    const outcome = await push(targetOf(fake, builtin("cisco-iosxr")), {
      lines: ["ntp server 192.0.2.9", "ntpp server 192.0.2.10"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", failedLine: { index: 1, stage: "line" } });
    expect(fake.received.map((l) => l.trim())).not.toContain("commit");
    expect(fake.state.running).toEqual(xr);
    expect(fake.state.candidate).toBeUndefined();
  });
});

describe("push to a PAN-OS firewall (built-in paloalto-panos template: candidate, commit, revert config)", () => {
  const panos = ["set deviceconfig system hostname fw1", "set zone trust network layer3 ethernet1/2"];
  const fw = () => device({ flavor: "panos", hostname: "fw1", running: panos });

  it("commits the candidate once", async () => {
    const fake = await fw();
    const outcome = await push(targetOf(fake, builtin("paloalto-panos")), {
      lines: ["set zone untrust network layer3 ethernet1/1", "set rulebase security rules out from trust"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.running).toEqual([
      ...panos,
      "set zone untrust network layer3 ethernet1/1",
      "set rulebase security rules out from trust",
    ]);
    expect(fake.state.commits).toBe(1);
    expect(fake.state.candidate).toBeUndefined();
  });

  it("a check (save false) reverts the candidate: nothing was committed", async () => {
    const fake = await fw();
    const outcome = await push(targetOf(fake, builtin("paloalto-panos")), {
      lines: ["set zone dmz network layer3 ethernet1/3"],
      save: false,
    });
    expect(outcome).toMatchObject({ status: "success", saved: false });
    expect(fake.received.map((l) => l.trim())).toContain("revert config");
    expect(fake.state.running).toEqual(panos);
    expect(fake.state.commits).toBe(0);
  });

  it("a commit that fails validation fails the push at its save step and changes nothing", async () => {
    const fake = await fw();
    const outcome = await push(targetOf(fake, builtin("paloalto-panos")), {
      lines: ["set rulebase security rules out from nowhere"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", saved: false, failedLine: { stage: "save", line: "commit" } });
    expect(outcome.failedLine!.answer).toContain("is not a valid reference");
    expect(fake.received.map((l) => l.trim())).toContain("revert config");
    expect(fake.state.running).toEqual(panos);
    expect(fake.state.commits).toBe(0);
  });

  it("an unknown command stops the push before the commit", async () => {
    const fake = await fw();
    const outcome = await push(targetOf(fake, builtin("paloalto-panos")), {
      lines: ["set zone dmz network layer3 ethernet1/3", "sett zone x"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", failedLine: { index: 1, stage: "line" } });
    expect(fake.received.map((l) => l.trim())).not.toContain("commit");
    expect(fake.state.running).toEqual(panos);
  });
});

describe("push to a Cisco Small Business switch (built-in cisco-smb template)", () => {
  it("applies the lines, answers write memory's overwrite question, and the startup configuration holds them", async () => {
    const fake = await device({ flavor: "smb" });
    const outcome = await push(targetOf(fake, builtin("cisco-smb")), {
      lines: ["ntp server 192.0.2.123", "logging host 192.0.2.50"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "success", saved: true });
    expect(fake.state.startup).toEqual([...running, "ntp server 192.0.2.123", "logging host 192.0.2.50"]);
  });

  it("a refused line stops the push unsaved", async () => {
    const fake = await device({ flavor: "smb" });
    const outcome = await push(targetOf(fake, builtin("cisco-smb")), {
      lines: ["ntp server 192.0.2.123", "bogus line"],
      save: true,
    });
    expect(outcome).toMatchObject({ status: "failed", saved: false, failedLine: { index: 1, stage: "line" } });
    expect(fake.state.startup).toEqual(running);
  });
});

describe.each([
  {
    key: "checkpoint-gaia",
    flavor: "gaia" as const,
    running: ["set hostname gw1", "set net-access telnet off"],
    line: "set snmp location dc1-row4",
  },
  {
    key: "juniper-screenos",
    flavor: "screenos" as const,
    running: ["set hostname fw1", "set clock timezone 0"],
    line: "set ntp server 192.0.2.123",
  },
])(
  "push to a $flavor device (built-in $key template: lines apply at once, save config)",
  ({ key, flavor, running: base, line }) => {
    it("applies the line and saves it", async () => {
      const fake = await device({ flavor, hostname: "fw1", running: base });
      const outcome = await push(targetOf(fake, builtin(key)), { lines: [line], save: true });
      expect(outcome).toMatchObject({ status: "success", saved: true });
      expect(fake.state.startup).toEqual([...base, line]);
    });

    it("a refused line stops the push unsaved", async () => {
      const fake = await device({ flavor, hostname: "fw1", running: base });
      const outcome = await push(targetOf(fake, builtin(key)), { lines: [line, "sett hostname x"], save: true });
      expect(outcome).toMatchObject({ status: "failed", saved: false, failedLine: { index: 1, stage: "line" } });
      expect(fake.received.map((l) => l.trim())).not.toContain("save config");
      expect(fake.state.startup).toEqual(base);
    });
  },
);
