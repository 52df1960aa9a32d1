import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { events } from "../../db/schema/index.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { finishJob } from "../tasks/settle.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import type { StoredEvent } from "../events/consumer.ts";
import { mailFor } from "./messages.ts";
import { recipient } from "./recipients.ts";

/**
 * The mail a recipient gets says only what their role may see: a run of a task reaching devices inside and
 * outside a scoped user's scope is told to them as the API shows it (its counts over their devices).
 */
let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

describe("a failed task run's mail", () => {
  it("counts, for a scoped recipient, only the devices in their scope, as the run's API answer does for them", async () => {
    await t.role({ name: "branch-ops", tags: ["branch"] });
    const scopedUser = await t.user({ username: "branch-oncall", role: "branch-ops" });
    const adminUser = await t.user({ username: "core-oncall" });
    const device = async (name: string, tags: string[]) =>
      (
        await t.call("/api/v1/devices", {
          method: "POST",
          token: admin,
          body: { device_name: name, device_ip: "192.0.2.40", device_vendor: "Cisco", device_tags: tags },
        })
      ).body.data.id as number;
    const ids = [
      await device("branch-sw1", ["branch"]),
      await device("core-rtr1", []),
      await device("core-rtr2", []),
      await device("core-rtr3", []),
    ];
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token: admin,
      body: {
        task_name: "Nightly all",
        task_type: "download_devices",
        devices: ids,
        task_cron: "0 2 * * *",
        notify_on_failure: true,
      },
    });
    expect(task.status).toBe(201);
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status).toBe(202);
    // Every device's download fails, as a collector would record it.
    for (;;) {
      const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
      if (!job) break;
      await finishJob(
        t.db,
        { ...job, maxAttempts: 1 },
        "test-collector",
        { outcome: "auth_failed", message: "the device refused the password" },
        new Date(),
      );
    }
    const [row] = await t.db.select().from(events).where(eq(events.type, "task.run.finished"));
    expect(row).toBeDefined();
    const event = row as unknown as StoredEvent;

    const scopedToken = await t.token(undefined, { userId: scopedUser });
    const seen = (
      await t.call(`/api/v1/task-runs/${(event.payload as { run_id: number }).run_id}`, { token: scopedToken })
    ).body.data.counts;
    expect(seen).toMatchObject({ total: 1, failed: 1 });

    const scopedMail = (await mailFor(t.db, event, (await recipient(t.db, scopedUser))!))!;
    expect(scopedMail.subject).toMatch(/: 1 device failed/);
    expect(scopedMail.text).toContain("0 succeeded, 0 unchanged, 1 failed, 0 skipped of 1.");
    expect(scopedMail.text).not.toContain("core-rtr");

    const adminMail = (await mailFor(t.db, event, (await recipient(t.db, adminUser))!))!;
    expect(adminMail.text).toContain("0 succeeded, 0 unchanged, 4 failed, 0 skipped of 4.");
  });

  it("a device's mail goes only to a recipient whose role sees the device now: a role narrowed since the event was dispatched gets none", async () => {
    await t.role({ name: "edge-ops", tags: ["edge"] });
    const narrowed = (await recipient(t.db, await t.user({ username: "edge-watcher", role: "edge-ops" })))!;
    const everyone = (await recipient(t.db, await t.user({ username: "all-watcher" })))!;
    const device = { id: 999, name: "core-sw9", ip: "192.0.2.99", category_id: null, tag_ids: [] };
    const changed = {
      id: 1,
      type: "config.changed",
      occurredAt: new Date("2026-06-01T12:00:00Z"),
      payload: {
        device,
        command: "show running-config",
        old_version_id: 1,
        new_version_id: 2,
        lines_added: 1,
        lines_removed: 0,
        job_id: null,
      },
    } as unknown as StoredEvent;
    const failing = {
      ...changed,
      type: "compliance.failed",
      payload: { device, policy_id: 1, policy_name: "ntp", failed_rules: 1 },
    } as unknown as StoredEvent;
    for (const event of [changed, failing]) {
      expect(await mailFor(t.db, event, narrowed), event.type).toBeUndefined();
      expect((await mailFor(t.db, event, everyone))!.subject, event.type).toContain("core-sw9");
    }
  });
});
