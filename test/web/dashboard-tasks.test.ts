import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runComplianceJob } from "../../collector/compliance-job.ts";
import { finishJob } from "../../src/modules/tasks/index.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { claimNextJob } from "../../src/platform/jobs/queue.ts";
import { createDevice, storeVersion } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * The dashboard's compliance, queue, task-status and latest-devices widgets, and on a task's page its last run's
 * failures and a run's report as CSV: what the dashboard and task-run API endpoints answer, in the user's scope,
 * linking only to pages the role opens.
 */
const unavailable = chromiumMissing("test/web/dashboard-tasks.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
/** The compliance widget once htmx has put it in place of its placeholder. */
const LOADED = "#compliance-summary:not([data-loading])";
/** Device names take no whitespace. */
const HOSTILE_NAME = `"><img/src=x/onerror=alert(1)>`;
const DEFINITION = [`// Description: NTP ${HOSTILE}`, "#[must_match_single_string]", "ntp server 192.0.2.123"].join(
  "\n",
);

describe.skipIf(unavailable)("dashboard widgets and task run reports in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const ids: Record<string, number> = {};
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const text = async (selector: string) => ((await b.page.textContent(selector)) ?? "").replace(/\s+/g, " ");

  /** What a collector does with the queued jobs: downloads end as `outcomes` says (success otherwise). */
  async function finishQueued(outcomes: Map<number, { outcome: "auth_failed" | "timeout"; message: string }>) {
    for (let job; (job = await claimNextJob(t.db, "test-collector", t.clock.now(), 60_000)); ) {
      if (job.type === "compliance") {
        await runComplianceJob(
          { db: t.db, secrets: t.secrets, clock: t.clock, logger: silentLogger, owner: "test-collector" },
          job,
        );
        continue;
      }
      const end = outcomes.get(job.deviceId!) ?? { outcome: "success" as const, message: "stored" };
      // One attempt: a failure ends the job (and the run) instead of waiting for a retry.
      await finishJob(
        t.db,
        { ...job, maxAttempts: 1 },
        "test-collector",
        { ...end, result: { duration_ms: 900 } },
        t.clock.now(),
      );
    }
  }

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    const at = new Date(t.clock.now().getTime() - 3_600_000);
    ids.edge = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
    ids.hostile = await createDevice(t, token, { device_name: HOSTILE_NAME, device_tags: ["edge"] });
    ids.core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
    await storeVersion(t, { deviceId: ids.edge, at, text: "hostname edge-1\nntp server 192.0.2.123\nend\n" });
    await storeVersion(t, { deviceId: ids.hostile, at, text: "hostname edge-2\nend\n" });
    await storeVersion(t, { deviceId: ids.core, at, text: "hostname core-1\nend\n" });
    const policy = (await api("/policies", "POST", { name: "ntp", definition: DEFINITION })).body.data.id;
    await api("/policy-assignments", "POST", { policy_id: policy, scope: "all" });
    await api(`/policies/${policy}/run`, "POST");
    const tag = async (name: string) => (await api(`/tags?filter[name]=${name}`)).body.data[0].id;
    const [edgeTag, coreTag] = [await tag("edge"), await tag("core")];
    ids.both = (
      await api("/tasks", "POST", {
        task_name: `Backup ${HOSTILE}`,
        task_type: "download_tags",
        tags: [edgeTag, coreTag],
        task_cron: "0 3 * * *",
      })
    ).body.data.id;
    ids.coreTask = (
      await api("/tasks", "POST", {
        task_name: "Core only",
        task_type: "download_tags",
        tags: [coreTag],
        task_cron: "0 4 * * *",
      })
    ).body.data.id;
    await finishQueued(new Map());
    ids.bothRun = (await api(`/tasks/${ids.both}/run`, "POST")).body.data.id;
    ids.coreRun = (await api(`/tasks/${ids.coreTask}/run`, "POST")).body.data.id;
    await finishQueued(
      new Map([
        [ids.hostile, { outcome: "auth_failed", message: `refused ${HOSTILE}` }],
        [ids.core, { outcome: "timeout", message: "no prompt within 30 s" }],
      ]),
    );
    // One download waits in the queue, for a device outside the scoped role's tags.
    expect((await api(`/download-now/${ids.core}`)).status).toBeLessThan(300);
    b = await startBrowserWithCast(t, [
      "system.read",
      "devices.read",
      "tasks.read",
      "configs.read",
      "policycompliance.read",
    ]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("shows compliance, tasks, the queue and the latest devices on the dashboard, names as text", async () => {
    const { page, base } = b;
    const compliance = (await api("/dashboard/compliance")).body.data;
    expect(compliance).toMatchObject({ devices: 3, compliant: 1, not_compliant: 2 });
    await page.goto(`${base}/dashboard`);
    // The compliance widget comes after the page, through htmx.
    await page.waitForSelector(LOADED);
    expect(await text("#compliance-summary")).toContain("33.3% of 3 devices with a result are compliant.");
    expect(await page.locator("#compliance-summary .counts li").allTextContents()).toEqual([
      "1Compliant",
      "2Not compliant",
      "0Not evaluated",
    ]);
    expect(await text("#compliance-summary tbody tr")).toBe(`NTP ${HOSTILE}2 devices`);
    expect(await page.getAttribute("#compliance-summary a", "href")).toBe("/compliance");

    const both = page.locator(`#task-status tr[data-id="${ids.both}"]`);
    expect(await both.locator("a").textContent()).toBe(`Backup ${HOSTILE}`);
    expect(await both.locator("a").getAttribute("href")).toBe(`/tasks/${ids.both}`);
    expect(await both.locator(".badge").textContent()).toBe("failed");
    expect(await page.locator(`#task-status tr[data-id="${ids.coreTask}"]`).count()).toBe(1);

    expect(await text("#queue p")).toMatch(/^1 job queued, 0 running; the oldest ready job has waited \d+ seconds?\.$/);
    expect(await text("#queue tbody")).toBe("download10");

    const latest = await page.locator("#latest-devices tbody tr td:first-child").allTextContents();
    expect(latest).toEqual(["core-1", HOSTILE_NAME, "edge-1"]);
    expect(await page.locator("#latest-devices a").first().getAttribute("href")).toBe(`/devices/${ids.core}`);
    // Hostile names are text, nowhere an element.
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("dashboard-widgets");
  });

  it("gives the compliance widget a page of its own, for a browser without JavaScript", async () => {
    const client = t.client();
    await client.login("admin1");
    const dashboard = await (await client.get("/dashboard")).text();
    expect(dashboard).toContain('hx-get="/dashboard/compliance"');
    expect(dashboard).toContain('<a href="/dashboard/compliance">');
    // What htmx asks for is the widget alone, to put in the placeholder's place.
    const fragment = await (await client.get("/dashboard/compliance", { "HX-Request": "true" })).text();
    expect(fragment).toMatch(/^<section class="card" id="compliance-summary">/);
    const { page, base } = b;
    const res = await page.goto(`${base}/dashboard/compliance`);
    expect(res?.status()).toBe(200);
    expect(await page.title()).toMatch(/^Compliance now/);
    expect(await text("#compliance-summary")).toContain("33.3% of 3 devices with a result are compliant.");
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("shows a scoped role only its devices, their tasks and their jobs", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/dashboard`);
    await page.waitForSelector(LOADED);
    expect(await page.locator("#latest-devices tbody tr td:first-child").allTextContents()).toEqual([
      HOSTILE_NAME,
      "edge-1",
    ]);
    expect(await text("#compliance-summary")).toContain("50% of 2 devices with a result are compliant.");
    expect(await page.locator(`#task-status tr[data-id="${ids.both}"]`).count()).toBe(1);
    expect(await page.locator(`#task-status tr[data-id="${ids.coreTask}"]`).count()).toBe(0);
    expect(await text("#queue p")).toBe("0 jobs queued, 0 running.");
    expect(await page.content()).not.toContain("core-1");
    await b.loginAs("admin1");
  });

  it("leaves out the links a role with only system.read could not open", async () => {
    const { page, base } = b;
    await t.role({ name: "dashboard-only", permissions: ["system.read"] });
    await t.user({ username: "watcher", role: "dashboard-only" });
    await b.loginAs("watcher");
    await page.goto(`${base}/dashboard`);
    await page.waitForSelector(LOADED);
    expect(await page.locator("#latest-devices tbody tr").count()).toBe(3);
    for (const widget of ["#compliance-summary", "#task-status", "#latest-devices", "#failing-devices", "#queue"])
      expect(await page.locator(`${widget} a`).count(), widget).toBe(0);
    await b.loginAs("admin1");
  });

  it("lists the last run's failures on the task page, each linking to its device's last failure", async () => {
    const { page, base } = b;
    await page.goto(`${base}/tasks/${ids.both}`);
    expect(await text("#last-failures h2")).toBe(`Failures of the last finished run (#${ids.bothRun})`);
    expect(await text("#last-failures p")).toMatch(/^2 devices failed; it finished /);
    const rows = page.locator("#last-failures tbody tr");
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((td) => td.textContent))),
    ).toEqual([
      [HOSTILE_NAME, "auth failed", `refused ${HOSTILE}`],
      ["core-1", "timeout", "no prompt within 30 s"],
    ]);
    expect(await rows.nth(0).locator("a").getAttribute("href")).toBe(`/devices/${ids.hostile}#last-failure`);
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("task-last-failures");
  });

  it("downloads a run's report as the API writes it", async () => {
    const { page, base } = b;
    await page.goto(`${base}/tasks/${ids.both}?run=${ids.bothRun}`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("a:text('Download the report (CSV)')"),
    ]);
    expect(download.suggestedFilename()).toBe(`task-run-${ids.bothRun}.csv`);
    const csv = readFileSync((await download.path())!, "utf8");
    const fromApi = await (await t.request(`/api/v1/task-runs/${ids.bothRun}/report.csv`, { token })).text();
    expect(csv).toBe(fromApi);
    expect(csv.split("\n")[0]).toMatch(/^run_id,task_name,device_id,device_name,status,outcome,error/);
    expect(csv.trim().split("\n")).toHaveLength(4);
  });

  it("gives a scoped role the failures and report of its devices only, and no run beyond them", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/tasks/${ids.both}`);
    expect(await text("#last-failures p")).toMatch(/^1 device failed; it finished /);
    expect(await page.locator("#last-failures tbody tr").count()).toBe(1);
    const report = await page.evaluate(async (path) => {
      const res = await fetch(path);
      return { status: res.status, body: await res.text() };
    }, `/task-runs/${ids.bothRun}/report.csv`);
    expect(report.status).toBe(200);
    expect(report.body).not.toContain("core-1");
    expect(report.body.trim().split("\n")).toHaveLength(3);
    const beyond = await page.evaluate(
      async (path) => (await fetch(path)).status,
      `/task-runs/${ids.coreRun}/report.csv`,
    );
    expect(beyond).toBe(404);
    expect((await page.goto(`${base}/tasks/${ids.coreTask}`))?.status()).toBe(404);
    await b.loginAs("admin1");
  });

  it("gives a read-only role the report and failures, and no Run now", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/tasks/${ids.both}`);
    expect(await page.locator("#last-failures tbody tr").count()).toBe(2);
    expect(await page.locator("a:text('Download the report (CSV)')").count()).toBe(1);
    expect(await page.locator("button:text('Run now')").count()).toBe(0);
    await b.loginAs("admin1");
  });
});
