import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
  latestConfigs,
} from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";

/**
 * The template's volatile-line filters, end to end: a device whose configuration changes only in lines the
 * cisco-ios template calls volatile (the last-change stamp, the NTP clock period) makes no new version, while a
 * real change does.
 */

const USERNAME = "netops";
const PASSWORD = "Volatile-Test-Pass-2210";
const runningWith = (stamp: string, clockPeriod: string, description = "uplink") => [
  "Building configuration...",
  "",
  `! Last configuration change at ${stamp} UTC Mon Jun 1 2026 by netops`,
  "hostname edge-v",
  "!",
  `ntp clock-period ${clockPeriod}`,
  "interface Gi0/1",
  ` description ${description}`,
  "!",
  "end",
];

let t: TestContext;
let token: string;
let device: FakeDevice;
/** What the fake device answers now; the tests change it between downloads. */
let current = iosScript("edge-v", runningWith("10:00:00", "17179869"));

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  device = await startFakeDevice({
    script: (line) => current.script(line),
    initPrompt: current.prompt,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
});
afterAll(async () => {
  await device.close();
  await t.close();
});

it("stores no new version when only volatile lines changed, and a new one when a real line did", async () => {
  const deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
  });
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  const first = (await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)!;
  expect(first).toContain("! Last configuration change at 10:00:00");

  // Only the volatile lines move: the same configuration, downloaded again.
  current = iosScript("edge-v", runningWith("11:30:00", "17179870"));
  expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
  const versions = await t.call(`/api/v1/configs?filter[device_id]=${deviceId}&filter[command]=${IOS_CONFIG_COMMAND}`, {
    token,
  });
  expect(versions.body.meta.total).toBe(1);
  expect((await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)).toBe(first);

  // A real change beside them is a new version.
  current = iosScript("edge-v", runningWith("12:00:00", "17179871", "uplink to core-2"));
  expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
  expect((await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)).toContain(" description uplink to core-2");
});
