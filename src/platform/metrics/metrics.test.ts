import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../../../collector/worker.ts";
import { webhooksConsumer } from "../../../collector/webhook-delivery.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  downloadOnce,
  IOS_CONFIG_COMMAND,
  iosScript,
} from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";
import { freePort } from "../../../test/helpers/process.ts";
import { until } from "../../../test/helpers/until.ts";
import { parsePrometheusText, sampleValue, type Scrape } from "../../../test/helpers/prometheus-text.ts";

const USERNAME = "netops";
const PASSWORD = "Metrics-Test-Pass-7731";

async function scrape(t: TestContext, token: string): Promise<Scrape> {
  const res = await t.request("/metrics", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

describe("GET /metrics access", () => {
  let t: TestContext;
  beforeAll(async () => (t = await createTestContext()));
  afterAll(() => t.close());

  it("asks for a token with system.read from a role that sees every device", async () => {
    const anonymous = await t.call("/metrics");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.message).toMatch(/system\.read/);
    expect((await t.call("/metrics", { headers: { authorization: "Bearer not-a-token" } })).status).toBe(401);

    const devicesOnly = await t.token(["devices.read"]);
    expect((await t.call("/metrics", { headers: { authorization: `Bearer ${devicesOnly}` } })).status).toBe(403);

    await t.role({ name: "branch-ops", permissions: ["system.read"], tags: ["branch"] });
    const scoped = await t.token(["system.read"], { role: "branch-ops" });
    const refused = await t.call(`/metrics?token=${scoped}`);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/every device/);

    const reader = await t.token(["system.read"]);
    expect((await t.request("/metrics", { headers: { authorization: `Bearer ${reader}` } })).status).toBe(200);
    expect((await t.request(`/metrics?token=${reader}`)).status).toBe(200);
    expect((await t.request("/metrics", { headers: { apitoken: reader } })).status).toBe(200);
  });

  it("answers anyone with METRICS_PUBLIC=on", async () => {
    const open = await createTestContext({ env: { METRICS_PUBLIC: "on" } });
    try {
      const res = await open.request("/metrics");
      expect(res.status).toBe(200);
      expect(parsePrometheusText(await res.text()).types.get("netkeep_jobs")).toBe("gauge");
    } finally {
      await open.close();
    }
  });
});

describe("GET /metrics figures", () => {
  let t: TestContext;
  let token: string;
  let device: FakeDevice;
  beforeAll(async () => {
    t = await createTestContext();
    token = await t.token();
    const { prompt, script } = iosScript("edge-4", ["hostname edge-4", "!", "end"]);
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

  it("counts requests by route template, backups by outcome and vendor, durations, jobs, versions and the database", async () => {
    const templateId = await builtinTemplateId(t, "cisco-ios");
    const good = await addLoopbackDevice(t, token, {
      port: device.port,
      templateId,
      username: USERNAME,
      password: PASSWORD,
      device_vendor: "Cisco",
    });
    // Nothing listens on a port just freed: the download ends unreachable.
    const dead = await addLoopbackDevice(t, token, {
      port: await freePort(),
      templateId,
      username: USERNAME,
      password: PASSWORD,
      device_vendor: "Juniper",
    });
    expect((await downloadOnce(t, good)).outcome).toBe("success");
    expect((await downloadOnce(t, dead, { connectTimeoutMs: 2000 })).outcome).toBe("unreachable");
    // Queued and waiting: nothing claims it in this test.
    expect((await t.call(`/api/v1/download-now/${good}`, { token })).status).toBe(200);

    for (const id of [good, dead, good]) expect((await t.call(`/api/v1/devices/${id}`, { token })).status).toBe(200);
    expect((await t.call("/api/v1/devices/999999", { token })).status).toBe(404);

    const s = await scrape(t, await t.token(["system.read"]));
    // Route templates, never raw paths: three answers of one template, and the 404 beside them.
    expect(
      sampleValue(s, "netkeep_http_request_duration_seconds_count", {
        route: "/api/v1/devices/:id",
        method: "GET",
        status: "200",
      }),
    ).toBe(3);
    expect(
      sampleValue(s, "netkeep_http_request_duration_seconds_count", {
        route: "/api/v1/devices/:id",
        method: "GET",
        status: "404",
      }),
    ).toBe(1);
    expect(s.samples.filter((x) => /\/\d+(\/|$)/.test(x.labels.route ?? "")).map((x) => x.labels.route)).toEqual([]);
    expect(
      sampleValue(s, "netkeep_http_request_duration_seconds_bucket", {
        route: "/api/v1/devices/:id",
        status: "200",
        le: "+Inf",
      }),
    ).toBe(3);

    expect(sampleValue(s, "netkeep_backups_last_hour", { outcome: "success", vendor: "Cisco" })).toBe(1);
    expect(sampleValue(s, "netkeep_backups_last_hour", { outcome: "unreachable", vendor: "Juniper" })).toBe(1);
    expect(sampleValue(s, "netkeep_backup_duration_seconds_last_hour_count")).toBe(1);
    expect(sampleValue(s, "netkeep_backup_duration_seconds_last_hour_bucket", { le: "+Inf" })).toBe(1);
    expect(sampleValue(s, "netkeep_backup_duration_seconds_last_hour_bucket", { le: "600" })).toBe(1);
    expect(s.types.get("netkeep_backup_duration_seconds_last_hour")).toBe("histogram");

    expect(sampleValue(s, "netkeep_jobs", { state: "queued", type: "download" })).toBe(1);
    expect(sampleValue(s, "netkeep_jobs", { state: "running", type: "download" })).toBe(0);
    expect(sampleValue(s, "netkeep_oldest_queued_job_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(s, "netkeep_collector_sessions_open")).toBe(0);
    expect(sampleValue(s, "netkeep_config_versions")).toBeGreaterThanOrEqual(1);
    expect(sampleValue(s, "netkeep_database_size_bytes")).toBeGreaterThan(4096);
    // Nothing was delivered to a webhook yet (the next test delivers one).
    expect(sampleValue(s, "netkeep_webhook_deliveries_last_hour", { outcome: "delivered" })).toBe(0);
    // No series names a device.
    for (const sample of s.samples) expect(Object.keys(sample.labels)).not.toContain("device");
  });
});

it("reads webhook deliveries from the webhooks' delivery log", async () => {
  const t = await createTestContext();
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.url ?? "");
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const token = await t.token();
    const port = (receiver.address() as AddressInfo).port;
    const hook = await t.call("/api/v1/webhooks", {
      method: "POST",
      token,
      body: { url: `http://127.0.0.1:${port}/hook` },
    });
    expect(hook.status).toBe(201);
    expect((await t.call(`/api/v1/webhooks/${hook.body.data.id}/ping`, { method: "POST", token })).status).toBe(202);
    const worker = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "metrics-test",
        consumers: [webhooksConsumer],
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 20 },
    );
    try {
      await until("the delivery to arrive", () => received.length, Boolean, { tries: 750 });
      // The delivery is logged once the worker records the answer.
      const scraped = await until(
        "the delivery in the metrics",
        () => scrape(t, token),
        (s) => sampleValue(s, "netkeep_webhook_deliveries_last_hour", { outcome: "delivered" }) === 1,
        { tries: 750 },
      );
      expect(sampleValue(scraped, "netkeep_webhook_deliveries_last_hour", { outcome: "failed" })).toBe(0);
    } finally {
      await worker.stop();
    }
    expect(received).toEqual(["/hook"]);
  } finally {
    receiver.close();
    await t.close();
  }
});

it("counts the requests the rate limit refuses", async () => {
  const t = await createTestContext({ rateLimitPerMinute: 2, clock: manualClock() });
  try {
    const token = await t.token();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await t.call("/api/v1/devices", { token })).status);
    expect(answers).toEqual([200, 200, 429, 429]);
    const s = await scrape(t, token);
    expect(sampleValue(s, "netkeep_rate_limited_requests_total", { key: "token" })).toBe(2);
    expect(
      sampleValue(s, "netkeep_http_request_duration_seconds_count", { route: "/api/v1/devices", status: "429" }),
    ).toBe(2);
  } finally {
    await t.close();
  }
});
