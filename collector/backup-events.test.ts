import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asc } from "drizzle-orm";
import { events } from "../src/db/schema/index.ts";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
} from "../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../test/helpers/fake-device.ts";

let t: TestContext;
let fake: FakeDevice;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(async () => {
  await fake?.close();
  await t.close();
});

const PASSWORD = "Right-Device-Pass-4410";

describe("backup events", () => {
  it("a failed download writes backup.failed; the next good one writes config.changed and backup.recovered; no secret in any", async () => {
    const admin = await t.token();
    const { prompt, script } = iosScript("edge-7", [
      "hostname edge-7",
      "enable secret 5 $1$abcd$Q2xKzH0mF9cAbCdEfGhIj.",
      "interface Gi0/1",
      " description uplink",
      "end",
    ]);
    fake = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: "netops", password: PASSWORD },
    });
    const deviceId = await addLoopbackDevice(t, admin, {
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "netops",
      password: "Wrong-Pass-0000",
      name: "edge-7",
    });

    const failed = await downloadOnce(t, deviceId);
    expect(failed.outcome).toBe("auth_failed");
    expect(
      (
        await t.call(`/api/v1/devices/${deviceId}`, {
          method: "PATCH",
          token: admin,
          body: { device_password: PASSWORD },
        })
      ).status,
    ).toBe(200);
    const good = await downloadOnce(t, deviceId);
    expect(good.outcome).toBe("success");
    const again = await downloadOnce(t, deviceId);
    expect(again.outcome).toBe("unchanged");

    const written = (await t.db.select().from(events).orderBy(asc(events.id))).filter(
      (e) => e.type !== "device.created" && e.type !== "device.updated",
    );
    const device = { id: deviceId, name: "edge-7", ip: "127.0.0.1", category_id: null, tag_ids: [] };
    expect(written.map((e) => e.type)).toEqual([
      "backup.failed",
      ...written.slice(1, -1).map(() => "config.changed"),
      "backup.recovered",
    ]);
    expect(written[0]!.payload).toEqual({ device, job_id: failed.id, outcome: "auth_failed", reason: failed.message });
    const running = written.find((e) => e.payload.command === IOS_CONFIG_COMMAND)!;
    expect(running.payload).toMatchObject({ device, old_version_id: null, job_id: good.id, lines_removed: 0 });
    expect(running.payload.lines_added).toBeGreaterThan(0);
    expect(running.payload.new_version_id).toBe((good.result!.config_ids as number[])[0]);
    expect(written.at(-1)!.payload).toEqual({ device, job_id: good.id, previous_job_id: failed.id });
    const text = JSON.stringify(written);
    for (const secret of [PASSWORD, "Wrong-Pass-0000", "$1$abcd$Q2xKzH0mF9cAbCdEfGhIj.", "uplink"])
      expect(text).not.toContain(secret);
  });

  it("a host key other than the pinned one writes backup.failed and host_key.changed", async () => {
    const admin = await t.token();
    const { prompt, script } = iosScript("edge-8", ["hostname edge-8", "end"]);
    fake = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: "netops", password: PASSWORD },
    });
    const deviceId = await addLoopbackDevice(t, admin, {
      port: fake.port,
      templateId: await builtinTemplateId(t, "cisco-ios"),
      username: "netops",
      password: PASSWORD,
      name: "edge-8",
    });
    expect((await downloadOnce(t, deviceId)).outcome).toBe("success");
    const port = fake.port;
    await fake.close();
    // The same address with a new key: a replaced device, or someone in between.
    fake = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: "netops", password: PASSWORD },
      port,
    });
    const changed = await downloadOnce(t, deviceId);
    expect(changed.outcome).toBe("host_key_changed");
    const written = (await t.db.select().from(events).orderBy(asc(events.id))).filter(
      (e) => e.type === "backup.failed" || e.type === "host_key.changed",
    );
    expect(written.map((e) => [e.type, e.payload.job_id])).toEqual([
      ["backup.failed", changed.id],
      ["host_key.changed", changed.id],
    ]);
    expect(written[1]!.payload.reason).toBe(changed.message);
  });
});
