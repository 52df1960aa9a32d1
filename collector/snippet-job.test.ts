import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../src/kernel/logger.ts";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, latestConfigs } from "../test/helpers/collector.ts";
import { startConfigDevice, type ConfigDevice } from "../test/helpers/config-device.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "./worker.ts";

/** Sends and deploys through the API, a real worker pushing to fake devices that apply what they are sent. */

const USERNAME = "netkeep";
const PASSWORD = "s3cret-Pa55";
const running = ["hostname edge-1", "interface Vlan20", " ip address 192.0.2.20 255.255.255.0"];

let t: TestContext;
let admin: string;
let worker: ReturnType<typeof startWorker>;
const started: ConfigDevice[] = [];

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  worker = startWorker(
    {
      db: t.db,
      secrets: t.secrets,
      clock: { now: () => new Date() },
      logger: silentLogger,
      owner: "collector-a",
      connectTimeoutMs: 5_000,
    },
    { ...DEFAULT_WORKER_OPTIONS, concurrency: 4, pollIntervalMs: 50 },
  );
});
afterAll(async () => {
  await worker.stop();
  t.close();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((d) => d.close()));
});

async function iosDevice(custom: Record<string, string> = {}): Promise<{ fake: ConfigDevice; id: number }> {
  const fake = await startConfigDevice({
    flavor: "ios",
    hostname: "edge-1",
    running,
    auth: { username: USERNAME, password: PASSWORD },
  });
  started.push(fake);
  const id = await addLoopbackDevice(t, admin, {
    port: fake.port,
    templateId: await builtinTemplateId(t, "cisco-ios"),
    username: USERNAME,
    password: PASSWORD,
    custom,
  });
  return { fake, id };
}

let snippetNames = 0;
async function snippet(content: string, rollback = ""): Promise<number> {
  const res = await t.call("/api/v1/snippets", {
    method: "POST",
    token: admin,
    body: { name: `job snippet ${++snippetNames}`, content, rollback_content: rollback },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

const send = (id: number, body: Record<string, unknown>) =>
  t.call(`/api/v1/snippets/${id}/send?wait=20`, { method: "POST", token: admin, body });
const pushOf = async (deploymentId: number) =>
  (await t.call(`/api/v1/snippet-deployments/${deploymentId}/devices`, { token: admin })).body.data[0];

async function junosDevice(): Promise<{ fake: ConfigDevice; id: number }> {
  const fake = await startConfigDevice({
    flavor: "junos",
    hostname: "core-1",
    running: ["set system host-name core-1"],
    auth: { username: USERNAME, password: PASSWORD },
  });
  started.push(fake);
  const id = await addLoopbackDevice(t, admin, {
    port: fake.port,
    templateId: await builtinTemplateId(t, "juniper-junos"),
    username: USERNAME,
    password: PASSWORD,
  });
  return { fake, id };
}

describe("a push run by the collector", () => {
  it("applies the rendered lines and saves them, stores the configuration before and after as snippet versions, and carries the diff", async () => {
    const { fake, id } = await iosDevice({ ntp: "192.0.2.123" });
    const snip = await snippet(
      "interface Vlan20\n description {why}\nexit\nntp server {ntp}\nip domain-name example.net",
    );
    const res = await send(snip, { device_id: id, dynamic_vars: { why: "uplink to core" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ type: "snippet_push", state: "finished", outcome: "success" });
    expect(fake.state.running).toContain(" description uplink to core");
    expect(fake.state.running).toContain("ntp server 192.0.2.123");
    expect(fake.state.startup).toEqual(fake.state.running);

    const pushed = await pushOf(res.body.data.deployment_id);
    expect(pushed.status).toBe("success");
    expect(pushed.result.diff).toContain("+ntp server 192.0.2.123");
    expect(pushed.result.diff).toContain("+ description uplink to core");
    // The fake device takes the domain name without showing it (as a device may): flagged.
    expect(pushed.result.lines_not_in_config).toEqual(["ip domain-name example.net"]);
    expect(pushed.transcript).toContain("> ntp server 192.0.2.123");
    expect(pushed.transcript).not.toContain(PASSWORD);
    // Before and after went through the normal storage path: versions marked as the snippet's.
    const versions = await t.call(
      `/api/v1/configs?filter[device_id]=${id}&filter[command]=show running-config&sort=version`,
      { token: admin },
    );
    expect(versions.body.data.map((v: any) => [v.version, v.trigger])).toEqual([
      [1, "snippet"],
      [2, "snippet"],
    ]);
    const after = await latestConfigs(t, id);
    expect(after.get("show running-config")).toContain("ntp server 192.0.2.123");
    const jobs = [pushed.result.before_job_id, pushed.result.after_job_id];
    for (const jobId of jobs)
      expect((await t.call(`/api/v1/jobs/${jobId}`, { token: admin })).body.data).toMatchObject({
        type: "download",
        trigger: "snippet",
        state: "finished",
      });
  });

  it("stops at a refused line: nothing after it is sent, nothing saved, the rollback runs, and the result names the line and the answer", async () => {
    const { fake, id } = await iosDevice();
    const snip = await snippet(
      "ntp server 192.0.2.1\nntp sever 192.0.2.2\nlogging host 192.0.2.50",
      "no ntp server 192.0.2.1",
    );
    const res = await send(snip, { device_id: id });
    expect(res.body.data).toMatchObject({ state: "finished", outcome: "error" });
    const pushed = await pushOf(res.body.data.deployment_id);
    expect(pushed.status).toBe("failed");
    expect(pushed.result.failed_line).toMatchObject({ index: 1, line: "ntp sever 192.0.2.2" });
    expect(pushed.result.failed_line.answer).toContain("% Invalid input detected at '^' marker.");
    expect(pushed.result.saved).toBe(false);
    expect(pushed.result.rolled_back).toBe(true);
    expect(fake.state.configLines).not.toContain("logging host 192.0.2.50");
    expect(fake.state.running).not.toContain("ntp server 192.0.2.1");
    expect(fake.state.startup).toEqual(running);
  });

  it("commits a Junos candidate, and a refused line leaves the running configuration as it was", async () => {
    const { fake, id } = await junosDevice();
    const good = await send(await snippet("set system ntp server {ntp}"), {
      device_id: id,
      dynamic_vars: { ntp: "192.0.2.9" },
    });
    expect(good.body.data).toMatchObject({ state: "finished", outcome: "success" });
    expect(fake.state.running).toContain("set system ntp server 192.0.2.9");
    const pushed = await pushOf(good.body.data.deployment_id);
    expect(pushed.result).toMatchObject({ saved: true, lines_not_in_config: [] });
    expect(pushed.result.diff).toContain("+set system ntp server 192.0.2.9");

    const before = [...fake.state.running];
    const bad = await send(await snippet("set system location building-2\nsett system foo"), { device_id: id });
    expect(await pushOf(bad.body.data.deployment_id)).toMatchObject({
      status: "failed",
      result: { saved: false, failed_line: { index: 1, line: "sett system foo" } },
    });
    expect(fake.state.running).toEqual(before);
  });
});
