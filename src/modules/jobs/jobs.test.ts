import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { until } from "../../../test/helpers/until.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { finishJob } from "../tasks/settle.ts";

let t: TestContext;
let reader: string;
let deviceId: number;
beforeAll(async () => {
  t = await createTestContext();
  const admin = await t.token();
  reader = await t.token(["configs.read"]);
  deviceId = (
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "dl-now-01", device_ip: "192.0.2.1", device_vendor: "Cisco" },
    })
  ).body.data.id;
});
afterAll(() => t.close());

describe("download now", () => {
  it("queues a high-priority job and answers 200 (rConfig's status, docs/rconfig.md) with its status URL; a second request reuses it", async () => {
    const res = await t.call(`/api/v1/download-now/${deviceId}`, { token: reader });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      device_id: deviceId,
      state: "queued",
      outcome: null,
      trigger: "download_now",
      priority: 100,
      type: "download",
    });
    expect(res.body.data.status_url).toBe(`http://localhost/api/v1/jobs/${res.body.data.id}`);
    expect(res.headers.get("location")).toBe(res.body.data.status_url);
    const again = await t.call(`/api/v1/download-now/${deviceId}`, { token: reader });
    expect(again.body.data.id).toBe(res.body.data.id);

    const status = await t.call(`/api/v1/jobs/${res.body.data.id}`, { token: reader });
    expect(status).toMatchObject({ status: 200, body: { data: { id: res.body.data.id, state: "queued" } } });

    // a collector finishes it
    const job = (await claimNextJob(t.db, "test-collector", new Date(), 60_000))!;
    expect(job.id).toBe(res.body.data.id);
    expect((await t.call(`/api/v1/jobs/${job.id}`, { token: reader })).body.data.state).toBe("running");
    await finishJob(
      t.db,
      job,
      "test-collector",
      { outcome: "success", result: { duration_ms: 1200, bytes: 5000 } },
      new Date(),
    );
    const done = await t.call(`/api/v1/jobs/${job.id}`, { token: reader });
    expect(done.body.data).toMatchObject({
      state: "finished",
      outcome: "success",
      result: { duration_ms: 1200, bytes: 5000 },
    });
  });

  it("with ?wait waits for the collector and answers 200 with the outcome", async () => {
    const collector = (async () => {
      const job = await until("the job to claim", () => claimNextJob(t.db, "waiter", new Date(), 60_000), Boolean, {
        tries: 100,
        everyMs: 50,
      });
      return finishJob(
        t.db,
        job!,
        "waiter",
        { outcome: "auth_failed", message: "the device refused the password" },
        new Date(),
      );
    })();
    const res = await t.call(`/api/v1/download-now/${deviceId}?wait=10`, { token: reader });
    await collector;
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      state: "finished",
      outcome: "auth_failed",
      message: "the device refused the password",
    });
  });

  it("with ?wait answers the unfinished job when time runs out, and validates wait", async () => {
    const started = Date.now();
    const res = await t.call(`/api/v1/download-now/${deviceId}?wait=1`, { token: reader });
    expect(res.status).toBe(200);
    expect(res.body.data.state).toBe("queued");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await t.call(`/api/v1/download-now/${deviceId}?wait=61`, { token: reader })).body.errors.wait).toEqual([
      "wait must be at most 60",
    ]);
  });

  it("answers 404 for unknown or out-of-scope devices and jobs, 409 for a disabled device", async () => {
    expect((await t.call("/api/v1/download-now/99999", { token: reader })).status).toBe(404);
    expect((await t.call("/api/v1/jobs/99999", { token: reader })).status).toBe(404);
    await t.role({ name: "elsewhere", tags: ["elsewhere"] });
    const scoped = await t.token(["configs.read"], { role: "elsewhere" });
    expect((await t.call(`/api/v1/download-now/${deviceId}`, { token: scoped })).status).toBe(404);
    const visibleJob = (await t.call(`/api/v1/download-now/${deviceId}`, { token: reader })).body.data.id;
    expect((await t.call(`/api/v1/jobs/${visibleJob}`, { token: reader })).status).toBe(200);
    expect((await t.call(`/api/v1/jobs/${visibleJob}`, { token: scoped })).status).toBe(404);
    const admin = await t.token();
    await t.call(`/api/v1/devices/${deviceId}/disable`, { method: "POST", token: admin });
    const disabled = await t.call(`/api/v1/download-now/${deviceId}`, { token: reader });
    expect(disabled.status).toBe(409);
    expect(disabled.body.message).toMatch(/disabled/);
  });

  it("needs configs.read", async () => {
    const devicesOnly = await t.token(["devices.read"]);
    expect((await t.call(`/api/v1/download-now/${deviceId}`, { token: devicesOnly })).status).toBe(403);
  });
});
