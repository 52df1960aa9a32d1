import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskRuns } from "../../../db/schema/index.ts";
import { claimNextJob } from "../../../platform/jobs/queue.ts";
import { finishJob } from "../../../modules/tasks/settle.ts";
import { createWebTestContext, csrfIn, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { createDevice } from "../../../modules/configs/test-fixtures.ts";

/** The tasks pages: the API's tasks, next runs and runs, run now, in the user's scope. */
let t: WebTestContext;
let admin: WebClient;
let taskId: number;
let devices: Record<string, number>;

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  devices = {
    "core-1": await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] }),
    "edge-1": await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] }),
  };
  const task = await t.call("/api/v1/tasks", {
    method: "POST",
    token,
    body: {
      task_name: "Backup both",
      task_type: "download_devices",
      devices: Object.values(devices),
      task_cron: "0 3 * * *",
    },
  });
  expect(task.status).toBe(201);
  taskId = task.body.data.id;
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
});
afterAll(() => t.close());

describe("the tasks pages", () => {
  it("lists the tasks with their next runs", async () => {
    const html = await (await admin.get("/tasks?search=backup")).text();
    expect(html).toContain(`<a href="/tasks/${taskId}">Backup both</a>`);
    const row = html.slice(html.indexOf(`/tasks/${taskId}"`));
    expect(row.match(/<time datetime="([^"]+)"/)![1]).toMatch(/T03:00:00\.000Z$/);
  });

  it("runs a task now and shows the run's outcome per device once the collector is done", async () => {
    const csrf = csrfIn(await (await admin.get(`/tasks/${taskId}`)).text())!;
    const res = await admin.postForm(`/tasks/${taskId}/run`, { _csrf: csrf });
    expect(res.status).toBe(303);
    const [run] = await t.db.select().from(taskRuns).where(eq(taskRuns.taskId, taskId));
    expect(res.headers.get("location")).toBe(`/tasks/${taskId}?run=${run!.id}`);
    expect(await (await admin.get(res.headers.get("location")!)).text()).toContain("0 of 2 done (0 running, 2 queued)");
    for (;;) {
      const job = await claimNextJob(t.db, "test-collector", t.clock.now(), 60_000);
      if (!job) break;
      const failed = job.deviceId === devices["edge-1"];
      await finishJob(
        t.db,
        { ...job, maxAttempts: 1 },
        "test-collector",
        failed ? { outcome: "unreachable", message: "connect ECONNREFUSED 192.0.2.10:22" } : { outcome: "success" },
        t.clock.now(),
      );
    }
    const html = await (await admin.get(res.headers.get("location")!)).text();
    const devicesPart = html.slice(html.indexOf('id="run-devices"'));
    expect(devicesPart).toContain("1 succeeded, 0 unchanged, 1 failed, 0 skipped");
    expect(devicesPart).toMatch(
      /edge-1<\/a><\/td><td><span class="badge item-failed">failed<\/span><\/td><td>unreachable<\/td><td>connect ECONNREFUSED 192.0.2.10:22<\/td>/,
    );
  });

  it("shows a scoped user only their devices of a run, and refuses run now without tasks.write", async () => {
    await t.role({ name: "edge-viewers", permissions: ["tasks.read", "devices.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-viewers" });
    const scoped = t.client();
    await scoped.login("edgy");
    const html = await (await scoped.get(`/tasks/${taskId}`)).text();
    expect(html).toContain("edge-1");
    expect(html).not.toContain("core-1");
    expect(html).not.toContain("Run now");
    expect((await scoped.postForm(`/tasks/${taskId}/run`, { _csrf: csrfIn(html)! })).status).toBe(403);
    expect((await scoped.get("/tasks/99999")).status).toBe(404);
  });
});
