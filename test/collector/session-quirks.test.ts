import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { templates } from "../../src/db/schema/index.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice, type FakeDeviceOptions } from "../helpers/fake-device.ts";

/**
 * What real devices do that a lab device does not, through the real collector against the fake SSH device:
 * each quirk used to cost the whole backup or part of the configuration.
 */

const USERNAME = "netops";
const PASSWORD = "Quirk-Test-Pass-4417";
const HOSTNAME = "edge-7";
const RUNNING_CONFIG = [
  "hostname edge-7",
  "!",
  "interface GigabitEthernet0/1",
  " description uplink to core",
  "!",
  "end",
];
const { prompt: PROMPT, script: iosAnswer } = iosScript(HOSTNAME, RUNNING_CONFIG);

let t: TestContext;
let token: string;
let iosTemplate: number;
const started: FakeDevice[] = [];

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  iosTemplate = await builtinTemplateId(t, "cisco-ios");
});
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
  await t.close();
});

async function fakeIos(options: Partial<FakeDeviceOptions>): Promise<number> {
  const device = await startFakeDevice({
    script: iosAnswer,
    initPrompt: `\r\n${PROMPT}`,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
    ...options,
  });
  started.push(device);
  return addLoopbackDevice(t, token, {
    port: device.port,
    templateId: iosTemplate,
    username: USERNAME,
    password: PASSWORD,
  });
}

describe("a pager prompt in the middle of a line", () => {
  // A device that pages by bytes, not lines, cuts a line at the pager; each erases its prompt its own way.
  const erasers = {
    backspaces: "\b".repeat(8) + " ".repeat(8) + "\b".repeat(8),
    "ANSI cursor-left and erase-line": "\x1b[8D\x1b[K",
    nothing: "",
  };
  for (const [how, erase] of Object.entries(erasers)) {
    it(`keeps the text before it, when the device erases the prompt with ${how}`, async () => {
      const id = await fakeIos({
        keys: [" "],
        script: (line) => {
          if (line === IOS_CONFIG_COMMAND)
            return `${IOS_CONFIG_COMMAND}\r\nhostname edge-7\r\n!\r\ninterface GigabitEthernet0/1\r\n description upli--More--`;
          if (line === " ") return `${erase}nk to core\r\n!\r\nend\r\n${PROMPT}`;
          return iosAnswer(line);
        },
      });
      const job = await downloadOnce(t, id);
      expect(job.outcome, job.message ?? "").toBe("success");
      expect((await latestConfigs(t, id)).get(IOS_CONFIG_COMMAND)).toBe(RUNNING_CONFIG.join("\n") + "\n");
    });
  }
});

describe("optional commands", () => {
  it("one the device stays silent to is skipped and recorded, and the configuration is still stored", async () => {
    const id = await fakeIos({
      script: (line) => {
        if (line === "show vtp status") return `${line}\r\n`; // echoed, then nothing: no VTP on this platform
        if (line === "") return `\r\n${PROMPT}`;
        return iosAnswer(line);
      },
    });
    // The normal silence limit is far longer than the whole test may take.
    const job = await downloadOnce(t, id, {
      limits: { idleTimeoutMs: 20_000, optionalIdleTimeoutMs: 300 },
      jobTimeLimitMs: 5_000,
    });
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.result).toMatchObject({
      skipped_commands: [{ command: "show vtp status", reason: expect.stringMatching(/silent for 0.3 s/) }],
    });
    const stored = await latestConfigs(t, id);
    expect(stored.get(IOS_CONFIG_COMMAND)).toBe(RUNNING_CONFIG.join("\n") + "\n");
    // The commands after the skipped one got their own output, not the prompt it left behind.
    expect(stored.get("show inventory")).toBe('NAME: "Chassis", DESCR: "Cisco Catalyst 9300"\n');
    expect(stored.has("show vtp status")).toBe(false);
  });

  it("one the device refuses (no VTP: IOS's '% Invalid input') stores nothing and is recorded as skipped", async () => {
    const id = await fakeIos({
      script: (line) =>
        line === "show vtp status"
          ? [line, "             ^", "% Invalid input detected at '^' marker.", "", PROMPT].join("\r\n")
          : iosAnswer(line),
    });
    const job = await downloadOnce(t, id);
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(job.result).toMatchObject({
      skipped_commands: [
        { command: "show vtp status", reason: "the device refused it: % Invalid input detected at '^' marker." },
      ],
    });
    const stored = await latestConfigs(t, id);
    expect(stored.has("show vtp status")).toBe(false);
    expect(stored.get(IOS_CONFIG_COMMAND)).toBe(RUNNING_CONFIG.join("\n") + "\n");
    expect(stored.get("show inventory")).toBe('NAME: "Chassis", DESCR: "Cisco Catalyst 9300"\n');
  });

  it("a session that fails keeps its transcript and last lines with the secrets masked", async () => {
    const id = await fakeIos({
      script: (line) =>
        line === IOS_CONFIG_COMMAND
          ? `${line}\r\nhostname edge-7\r\nsnmp-server community Quirk-Community-77 RO\r\n`
          : iosAnswer(line),
    });
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 600, optionalIdleTimeoutMs: 300 } });
    expect(job.outcome).toBe("timeout");
    expect(job.result!.last_lines).toEqual([
      IOS_CONFIG_COMMAND,
      "hostname edge-7",
      "snmp-server community <secret hidden> RO",
    ]);
    expect(job.result!.transcript).toContain(
      `[sent] ${IOS_CONFIG_COMMAND}\n${IOS_CONFIG_COMMAND}\nhostname edge-7\nsnmp-server community <secret hidden> RO`,
    );
    expect(JSON.stringify(job.result)).not.toContain("Quirk-Community-77");
  });

  it("an essential command that stays silent still fails the job", async () => {
    const id = await fakeIos({ script: (line) => (line === IOS_CONFIG_COMMAND ? `${line}\r\n` : iosAnswer(line)) });
    const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 600, optionalIdleTimeoutMs: 300 } });
    expect(job.outcome).toBe("timeout");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });
});

describe("a configuration command that prints no configuration", () => {
  const answering = (output: string[]) => (line: string) =>
    line === IOS_CONFIG_COMMAND ? [line, ...output, PROMPT].join("\r\n") : iosAnswer(line);

  it("printing nothing ends the job output_invalid and stores nothing, not even the other commands", async () => {
    const id = await fakeIos({ script: answering([]) });
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("output_invalid");
    expect(job.message).toBe(`'${IOS_CONFIG_COMMAND}' returned no configuration text; nothing was stored`);
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it("printing only lines the template drops counts as nothing", async () => {
    const id = await fakeIos({ script: answering(["Building configuration..."]) });
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("output_invalid");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it("printing text without the template's config_marker ends the job output_invalid, and says what it printed", async () => {
    const id = await fakeIos({
      script: answering(["% Authorization failed.", "snmp-server community Marker-Test-Community RO"]),
    });
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("output_invalid");
    expect(job.message).toContain("without the template's config_marker /^hostname \\S/");
    expect(job.message).toContain("% Authorization failed.");
    // What it printed is shown as it would have been stored: secrets out.
    expect(job.message).not.toContain("Marker-Test-Community");
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  it("a template's min_bytes refuses a configuration shorter than it", async () => {
    const [ios] = await t.db.select({ code: templates.code }).from(templates).where(eq(templates.id, iosTemplate));
    const created = await t.call("/api/v1/templates", {
      method: "POST",
      token,
      body: { name: "ios with min_bytes", code: `${ios!.code}\nmin_bytes: 4096\n` },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const device = await startFakeDevice({
      script: iosAnswer,
      initPrompt: `\r\n${PROMPT}`,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const id = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId: created.body.data.id,
      username: USERNAME,
      password: PASSWORD,
    });
    const job = await downloadOnce(t, id);
    expect(job.outcome).toBe("output_invalid");
    expect(job.message).toMatch(/returned \d+ bytes, fewer than the template's min_bytes \(4096\)/);
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });
});

describe("a login asked again inside the SSH session", () => {
  // Cisco WLCs (AireOS) and Cisco SMB switches without "ip ssh password-auth" accept any SSH login, then ask for
  // the user name and password in the shell, as a Telnet device would.
  const inBand = (refuse: boolean) => (line: string) => {
    if (line === USERNAME) return `${USERNAME}\r\nPassword: `;
    if (line === PASSWORD) return refuse ? "\r\n% Authentication failed\r\n\r\nUsername: " : `\r\n${PROMPT}`;
    return iosAnswer(line);
  };

  it("is answered with the device's credentials, and the configuration is stored", async () => {
    const device = await startFakeDevice({
      script: inBand(false),
      initPrompt: "\r\nUser Access Verification\r\n\r\nUsername: ",
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const id = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId: iosTemplate,
      username: USERNAME,
      password: PASSWORD,
    });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("success");
    expect((await latestConfigs(t, id)).get(IOS_CONFIG_COMMAND)).toBe(RUNNING_CONFIG.join("\n") + "\n");
    expect(device.received.slice(0, 2)).toEqual([`${USERNAME}\n`, `${PASSWORD}\n`]);
    expect(device.unexpected).toEqual([]);
  });

  it("refused there is auth_failed, and the password is nowhere in the job", async () => {
    const device = await startFakeDevice({
      script: inBand(true),
      initPrompt: "\r\nUsername: ",
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const id = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId: iosTemplate,
      username: USERNAME,
      password: PASSWORD,
    });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("auth_failed");
    expect(JSON.stringify(job)).not.toContain(PASSWORD);
  });

  it("a device that goes straight to its prompt is not sent the credentials", async () => {
    const device = await startFakeDevice({
      script: iosAnswer,
      initPrompt: `\r\n${PROMPT}`,
      auth: { username: USERNAME, password: PASSWORD },
    });
    started.push(device);
    const id = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId: iosTemplate,
      username: USERNAME,
      password: PASSWORD,
    });
    const job = await downloadOnce(t, id, { jobTimeLimitMs: 5_000 });
    expect(job.outcome, job.message ?? "").toBe("success");
    expect(device.received.join("")).not.toContain(PASSWORD);
  });
});
