import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asc, inArray } from "drizzle-orm";
import { events } from "../../db/schema/index.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { finishJob } from "../tasks/settle.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { createDevice, storeVersion } from "../configs/test-fixtures.ts";
import { evaluatePendingVersions } from "../compliance/pending.ts";
import { completePushJob } from "../snippets/deployments.ts";

let t: TestContext;
let admin: string;
const clock = manualClock(new Date("2026-11-24T12:00:00Z"));
beforeEach(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterEach(() => t.close());

const written = async (...types: string[]) =>
  (await t.db.select().from(events).where(inArray(events.type, types)).orderBy(asc(events.id))).map((e) => ({
    type: e.type,
    payload: e.payload,
  }));

describe("events of runs, checks and deployments", () => {
  it("a task run's last job finishing writes task.run.finished with its outcome counts", async () => {
    const a = await createDevice(t, admin, { device_name: "run-a" });
    const b = await createDevice(t, admin, { device_name: "run-b" });
    const task = (
      await t.call("/api/v1/tasks", {
        method: "POST",
        token: admin,
        body: { task_name: "nightly", task_type: "download_devices", devices: [a, b], task_cron: "0 3 * * *" },
      })
    ).body.data;
    const run = (await t.call(`/api/v1/tasks/${task.id}/run`, { method: "POST", token: admin })).body.data;
    const first = (await claimNextJob(t.db, "c", clock.now(), 60_000))!;
    await finishJob(t.db, first, "c", { outcome: "success" }, clock.now());
    expect(await written("task.run.finished")).toEqual([]);
    const second = (await claimNextJob(t.db, "c", clock.now(), 60_000))!;
    await finishJob(t.db, second, "c", { outcome: "auth_failed", message: "refused" }, clock.now());
    expect(await written("task.run.finished")).toEqual([
      {
        type: "task.run.finished",
        payload: {
          task_id: task.id,
          task_name: "nightly",
          run_id: run.id,
          notify_on_failure: false,
          summary: { total: 2, succeeded: 1, unchanged: 0, failed: 1, skipped: 0 },
        },
      },
    ]);
  });

  it("compliance.failed when a device stops passing a policy, compliance.recovered when it passes again; not on every failing check", async () => {
    const d = await createDevice(t, admin, { device_name: "checked-1" });
    const definition =
      "// Description: no SNMP community public\n#[must_not_match_single_string]\nsnmp-server community public\n";
    const policy = (
      await t.call("/api/v1/policies", { method: "POST", token: admin, body: { name: "no public", definition } })
    ).body.data;
    expect(
      (
        await t.call("/api/v1/policy-assignments", {
          method: "POST",
          token: admin,
          body: { policy_id: policy.id, scope: "devices", devices: [d], run_on_backup: true },
        })
      ).status,
    ).toBe(201);
    const texts = [
      "hostname r1\nsnmp-server community s3cret RO\nend",
      "hostname r1\nsnmp-server community public RO\nend",
      "hostname r1\nsnmp-server community public RO\nntp server 192.0.2.1\nend",
      "hostname r1\nend",
    ];
    for (const text of texts) {
      clock.advance(1000);
      await storeVersion(t, { deviceId: d, text, at: clock.now() });
      await evaluatePendingVersions(t.db, 25, clock.now());
    }
    const device = { id: d, name: "checked-1", ip: expect.any(String), category_id: null, tag_ids: [] };
    expect(await written("compliance.failed", "compliance.recovered")).toEqual([
      {
        type: "compliance.failed",
        payload: { device, policy_id: policy.id, policy_name: "no public", failed_rules: 1 },
      },
      { type: "compliance.recovered", payload: { device, policy_id: policy.id, policy_name: "no public" } },
    ]);
  });

  it("a snippet deployment's last device writes snippet.deployment.finished with its counts", async () => {
    const a = await createDevice(t, admin, { device_name: "push-a" });
    const b = await createDevice(t, admin, { device_name: "push-b" });
    const snippet = (
      await t.call("/api/v1/snippets", {
        method: "POST",
        token: admin,
        body: { name: "ntp", content: "ntp server {ntp}" },
      })
    ).body.data;
    const res = await t.call(`/api/v1/snippets/${snippet.id}/deploy`, {
      method: "POST",
      token: admin,
      body: { devices: [a, b], dynamic_vars: { ntp: "192.0.2.1" } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    for (let job; (job = await claimNextJob(t.db, "c", clock.now(), 60_000)); ) {
      const ok = job.deviceId === a;
      await completePushJob(
        t.db,
        job,
        "c",
        {
          status: ok ? "success" : "failed",
          outcome: ok ? "success" : "error",
          message: ok ? "pushed" : "refused",
          result: {},
          transcript: "",
        },
        clock.now(),
        finishJob,
      );
    }
    expect(await written("snippet.deployment.finished")).toEqual([
      {
        type: "snippet.deployment.finished",
        payload: {
          deployment_id: res.body.data.id,
          snippet_id: snippet.id,
          snippet_name: "ntp",
          summary: { total: 2, succeeded: 1, failed: 1, skipped: 0 },
        },
      },
    ]);
  });
});
