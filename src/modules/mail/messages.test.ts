import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { events } from "../../db/schema/index.ts";
import { claimNextJob, completeJob } from "../../jobs/queue.ts";
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
      (await t.call("/api/v1/devices", { method: "POST", token: admin, body: { device_name: name, device_ip: "192.0.2.40", device_vendor: "Cisco", device_tags: tags } })).body.data.id as number;
    const ids = [await device("branch-sw1", ["branch"]), await device("core-rtr1", []), await device("core-rtr2", []), await device("core-rtr3", [])];
    const task = await t.call("/api/v1/tasks", {
      method: "POST", token: admin, body: { task_name: "Nightly all", task_type: "download_devices", devices: ids, task_cron: "0 2 * * *", notify_on_failure: true },
    });
    expect(task.status).toBe(201);
    const run = await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin });
    expect(run.status).toBe(202);
    // Every device's download fails, as a collector would record it.
    for (;;) {
      const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
      if (!job) break;
      await completeJob(t.db, { ...job, maxAttempts: 1 }, "test-collector", { outcome: "auth_failed", message: "the device refused the password" }, new Date());
    }
    const [row] = await t.db.select().from(events).where(eq(events.type, "task.run.finished"));
    expect(row).toBeDefined();
    const event = row as unknown as StoredEvent;

    const scopedToken = await t.token(undefined, { userId: scopedUser });
    const seen = (await t.call(`/api/v1/task-runs/${(event.payload as { run_id: number }).run_id}`, { token: scopedToken })).body.data.counts;
    expect(seen).toMatchObject({ total: 1, failed: 1 });

    const scopedMail = (await mailFor(t.db, event, (await recipient(t.db, scopedUser))!))!;
    expect(scopedMail.subject).toMatch(/: 1 device failed/);
    expect(scopedMail.text).toContain("0 succeeded, 0 unchanged, 1 failed, 0 skipped of 1.");
    expect(scopedMail.text).not.toContain("core-rtr");

    const adminMail = (await mailFor(t.db, event, (await recipient(t.db, adminUser))!))!;
    expect(adminMail.text).toContain("0 succeeded, 0 unchanged, 4 failed, 0 skipped of 4.");
  });
});
