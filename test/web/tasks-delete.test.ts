import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevice } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Deleting a task from the browser after a confirmation page (DELETE /tasks/{id}). */
const unavailable = chromiumMissing("test/web/tasks-delete.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("task delete in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let edgeTag: number;
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const makeTask = async (name: string, body: Record<string, unknown>) =>
    (await api("/tasks", "POST", { task_name: name, task_cron: "0 3 * * *", ...body })).body.data.id as number;
  const exists = async (id: number) => (await api(`/tasks/${id}`)).status === 200;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["tasks.read", "tasks.write", "devices.read"]);
    await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
    await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    edgeTag = (await api("/tags?filter[name]=edge")).body.data[0].id;
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("deletes a task after its confirmation page, whose hostile name is text", async () => {
    const { page, base } = b;
    const id = await makeTask(HOSTILE, { task_type: "download_all" });
    // Reached from the task's page.
    await page.goto(`${base}/tasks/${id}`);
    await page.click(`a[href="/tasks/${id}/delete"]`);
    await page.waitForURL(`${base}/tasks/${id}/delete`);
    expect(await page.textContent("h1")).toBe(`Delete the task ${HOSTILE}?`);
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("task-delete");
    await page.click("button:text('Delete the task')");
    await page.waitForURL(`${base}/tasks`);
    expect(await exists(id)).toBe(false);
  });

  it("says beforehand that a system task is paused, not deleted, and offers no button", async () => {
    const { page, base } = b;
    const system = (await api("/tasks?per_page=100")).body.data.find((x: { is_system: boolean }) => x.is_system);
    await page.goto(`${base}/tasks/${system.id}`);
    expect(await page.locator(`a[href="/tasks/${system.id}/delete"]`).count()).toBe(0);
    await page.goto(`${base}/tasks/${system.id}/delete`);
    expect(await page.textContent(".alert.error")).toContain("is a system task: pause it instead");
    expect(await page.locator("button:text('Delete the task')").count()).toBe(0);
    expect(await exists(system.id)).toBe(true);
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    const id = await makeTask("keep me", { task_type: "download_all" });
    await page.goto(`${base}/tasks/${id}/delete`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch(`/tasks/${id}/delete`, {
            method: "POST",
            body: "_csrf=nope",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      id,
    );
    expect(status).toBe(403);
    expect(await exists(id)).toBe(true);
  });

  it("lets a scoped user delete their own tasks only", async () => {
    const { page, base } = b;
    const everything = await makeTask("every device", { task_type: "download_all" });
    const coreTag = (await api("/tags?filter[name]=core")).body.data[0].id;
    const core = await makeTask("core only", { task_type: "download_tags", tags: [coreTag] });
    const edge = await makeTask("edge only", { task_type: "download_tags", tags: [edgeTag] });
    await b.loginAs("edgy");
    // A task about core devices alone is outside the scope: not found.
    expect((await page.goto(`${base}/tasks/${core}/delete`))!.status()).toBe(404);
    await page.goto(`${base}/tasks/${everything}/delete`);
    expect(await page.textContent(".alert.error")).toContain("outside your scope");
    expect(await page.locator("button:text('Delete the task')").count()).toBe(0);
    await page.goto(`${base}/tasks/${edge}/delete`);
    await page.click("button:text('Delete the task')");
    await page.waitForURL(`${base}/tasks`);
    expect(await exists(edge)).toBe(false);
    expect(await exists(everything)).toBe(true);
    expect(await exists(core)).toBe(true);
    await b.loginAs("admin1");
  });

  it("refuses a viewer", async () => {
    const { page, base } = b;
    const id = await makeTask("viewer cannot", { task_type: "download_all" });
    await b.loginAs("viewer1");
    expect((await page.goto(`${base}/tasks/${id}/delete`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
