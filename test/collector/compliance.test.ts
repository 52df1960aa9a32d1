import { afterAll, beforeAll, expect, it } from "vitest";
import { startCompliancePass } from "../../collector/compliance-pass.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { evaluatePendingVersions } from "../../src/modules/compliance/index.ts";
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
import { until } from "../helpers/until.ts";

/**
 * Run-on-backup end to end: the collector downloads from a (fake) device over SSH, the stored version is queued,
 * the collector's background pass evaluates it, and the result appears through the API; a second identical
 * download stores nothing new, so it adds no result.
 */

const USERNAME = "netops";
const PASSWORD = "Compliance-Test-Pass-4410";
const RUNNING_CONFIG = ["hostname core-9", "!", "ip http server", "ntp server 192.0.2.1", "!", "end"];
const DEFINITION = [
  "// Description: NTP keeps logs and certificates on time",
  "#[must_match_single_string]",
  "ntp server",
  "",
  "// Description: the HTTP server is off",
  "#[must_not_match_single_string]",
  "ip http server",
  "",
].join("\n");

let t: TestContext;
let token: string;
let device: FakeDevice;

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  const { prompt, script } = iosScript("core-9", RUNNING_CONFIG);
  device = await startFakeDevice({
    script,
    initPrompt: prompt,
    configCommand: IOS_CONFIG_COMMAND,
    auth: { username: USERNAME, password: PASSWORD },
  });
});
afterAll(async () => {
  await device.close();
  await t.close();
});

const untilResults = (n: number) =>
  until(
    `${n} compliance results`,
    async () => (await t.call("/api/v1/policy-compliance", { token })).body,
    (list) => list.meta.total >= n,
  );

it("evaluates a downloaded version in the background and adds nothing for an identical download", async () => {
  const deviceId = await addLoopbackDevice(t, token, {
    port: device.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
    name: "core-9",
  });
  const policy = await t.call("/api/v1/policies", {
    method: "POST",
    token,
    body: { name: "baseline", definition: DEFINITION },
  });
  // No command given: the device's configuration command (the IOS template's show running-config).
  await t.call("/api/v1/policy-assignments", {
    method: "POST",
    token,
    body: { policy_id: policy.body.data.id, scope: "devices", devices: [deviceId] },
  });
  const pass = startCompliancePass(
    { db: t.db, clock: { now: () => new Date() }, logger: silentLogger },
    { pollIntervalMs: 20, busyIntervalMs: 20, batch: 25, busy: () => false },
  );
  try {
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    const list = await untilResults(1);
    expect(list.meta.total).toBe(1);
    const result = list.data[0];
    expect(result).toMatchObject({
      device_id: deviceId,
      command: IOS_CONFIG_COMMAND,
      config_version: 1,
      status: "not_compliant",
      score: 50,
    });
    expect(result.rules[1]).toMatchObject({
      passed: false,
      evidence: [{ text: "ip http server" }],
      remediation: ["no ip http server"],
    });
    // The evidence's line number is the line in the stored text.
    const stored = (await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)!;
    expect(result.rules[1].evidence[0].line).toBe(stored.split("\n").indexOf("ip http server") + 1);

    expect((await downloadOnce(t, deviceId)).outcome).toBe("unchanged");
    // The background pass stopped, one pass by hand: whatever the download queued is evaluated now, and nothing was.
    await pass.stop();
    expect(
      (await evaluatePendingVersions(t.db, 25, new Date())).taken,
      "versions queued by the unchanged download",
    ).toBe(0);
    expect((await t.call("/api/v1/policy-compliance", { token })).body.meta.total).toBe(1);
    expect((await t.call(`/api/v1/devices/${deviceId}/compliance`, { token })).body.data.status).toBe("not_compliant");
  } finally {
    await pass.stop();
  }
});
