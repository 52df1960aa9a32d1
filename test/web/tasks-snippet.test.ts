import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevice } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Snippet tasks from the task form: the snippet chosen from a list, its deploy settings, as POST/PATCH /tasks take them. */
const unavailable = chromiumMissing("test/web/tasks-snippet.test.ts");
const HOSTILE = `ntp "><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("snippet tasks in the task form, in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const ids: Record<string, number> = {};
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const taskNamed = async (name: string) =>
    ((await api("/tasks?per_page=100")).body.data as { id: number; task_name: string }[]).find(
      (x) => x.task_name === name,
    );

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["devices.read", "tasks.read", "tasks.write", "snippets.read", "snippets.write"]);
    await t.role({ name: "tasks-only", permissions: ["devices.read", "tasks.read", "tasks.write", "snippets.read"] });
    await t.user({ username: "planner", role: "tasks-only" });
    ids.edge = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
    ids.core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    ids.ntp = (await api("/snippets", "POST", { name: HOSTILE, content: "ntp server {ntp}" })).body.data.id;
    ids.banner = (await api("/snippets", "POST", { name: "banner", content: "banner motd x" })).body.data.id;
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("creates a snippet task with the snippet chosen from the list and its deploy settings", async () => {
    const { page, base } = b;
    await page.goto(`${base}/tasks/new`);
    await page.fill("#t-task_name", "Weekly NTP");
    await page.selectOption("#t-task_type", "snippet");
    // The hostile name is an option's text, not markup.
    expect(await page.locator("#t-snippet_id option").allTextContents()).toEqual(["None", "banner", HOSTILE]);
    expect(await page.locator("main img").count()).toBe(0);
    await page.selectOption("#t-snippet_id", String(ids.ntp));
    await page.selectOption("#t-devices", [String(ids.edge)]);
    await page.fill("#t-variables", "ntp=10.0.0.5");
    await page.fill("#t-confirm_device_count", "1");
    await page.fill("#t-concurrency", "2");
    await page.check("input[name=stop_on_failure]");
    await page.fill("#t-task_cron", "0 4 * * 0");
    await b.shoot("task-new-snippet");
    await page.click("button:text('Save task')");
    await page.waitForURL(/\/tasks\/\d+\?done=created/);
    const task = (await api(`/tasks/${(await taskNamed("Weekly NTP"))!.id}`)).body.data;
    expect(task).toMatchObject({
      task_type: "snippet",
      snippet_id: ids.ntp,
      devices: [ids.edge],
      snippet_options: {
        dynamic_vars: { ntp: "10.0.0.5" },
        confirm_device_count: 1,
        concurrency: 2,
        stop_on_failure: true,
      },
    });
    // Edit keeps what it holds and changes the snippet.
    await page.goto(`${base}/tasks/${task.id}/edit`);
    expect(await page.inputValue("#t-snippet_id")).toBe(String(ids.ntp));
    expect(await page.inputValue("#t-variables")).toBe("ntp=10.0.0.5");
    expect(await page.isChecked("input[name=stop_on_failure]")).toBe(true);
    await page.selectOption("#t-snippet_id", String(ids.banner));
    await page.fill("#t-variables", "");
    await page.click("button:text('Save task')");
    await page.waitForURL(/done=saved/);
    const edited = (await api(`/tasks/${task.id}`)).body.data;
    expect(edited.snippet_id).toBe(ids.banner);
    expect(edited.snippet_options.dynamic_vars).toBeUndefined();
    expect(edited.snippet_options.confirm_device_count).toBe(1);
  });

  it("shows a missing snippet and a bad setting next to their fields, keeping what was typed", async () => {
    const { page, base } = b;
    await page.goto(`${base}/tasks/new`);
    await page.fill("#t-task_name", "no snippet");
    await page.selectOption("#t-task_type", "snippet");
    await page.fill("#t-concurrency", "500");
    await page.fill("#t-variables", "ntp=10.0.0.9");
    await page.click("button:text('Save task')");
    expect(await page.textContent("#t-concurrency-error")).toBe("must be at most 100");
    await page.fill("#t-concurrency", "");
    await page.click("button:text('Save task')");
    expect(await page.textContent("#t-snippet_id-error")).toBe("is required for snippet tasks");
    expect(await page.inputValue("#t-variables")).toBe("ntp=10.0.0.9");
    expect(await taskNamed("no snippet")).toBeUndefined();
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    await page.goto(`${base}/tasks/new`);
    const status = await page.evaluate(
      async (snippet) =>
        (
          await fetch("/tasks/new", {
            method: "POST",
            body: `_csrf=forged&task_name=forged&task_type=snippet&snippet_id=${snippet}&task_cron=0+1+*+*+*`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      ids.ntp,
    );
    expect(status).toBe(403);
    expect(await taskNamed("forged")).toBeUndefined();
  });

  it("offers a scoped user snippet tasks on their devices only", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    try {
      await page.goto(`${base}/tasks/new`);
      expect(await page.locator("#t-devices option").allTextContents()).toEqual(["edge-1"]);
      await page.fill("#t-task_name", "edge ntp");
      await page.selectOption("#t-task_type", "snippet");
      await page.selectOption("#t-snippet_id", String(ids.ntp));
      await page.selectOption("#t-devices", [String(ids.edge)]);
      await page.click("button:text('Save task')");
      await page.waitForURL(/done=created/);
      expect((await taskNamed("edge ntp"))!).toBeTruthy();
      // A core device posted anyway is the API's refusal.
      const answer = await page.evaluate(
        async ({ csrf, core, snippet }) => {
          const res = await fetch("/tasks/new", {
            method: "POST",
            body: `_csrf=${csrf}&task_name=sneaky&task_type=snippet&snippet_id=${snippet}&devices=${core}&task_cron=0+1+*+*+*`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          });
          return [res.status, await res.text()] as const;
        },
        { csrf: (await b.csrf())!, core: ids.core, snippet: ids.ntp },
      );
      expect(answer[0]).toBe(422);
      expect(answer[1]).toContain(`has unknown device id: ${ids.core}`);
      expect(await taskNamed("sneaky")).toBeUndefined();
    } finally {
      await b.loginAs("admin1");
    }
  });

  it("gives a role without snippets.write no snippet type, and no save on a snippet task", async () => {
    const { page, base } = b;
    const id = (await taskNamed("Weekly NTP"))!.id;
    await b.loginAs("planner");
    try {
      await page.goto(`${base}/tasks/new`);
      expect(await page.locator("#t-task_type option[value=snippet]").count()).toBe(0);
      expect(await page.locator("#t-snippet_id").count()).toBe(0);
      await page.goto(`${base}/tasks/${id}/edit`);
      expect(await page.textContent("#snippet-task-refusal")).toContain("needs the snippets.write ability");
      expect(await page.locator("button:text('Save task')").count()).toBe(0);
    } finally {
      await b.loginAs("admin1");
    }
  });
});
