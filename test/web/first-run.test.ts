import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { claimNextJob } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { iosScript } from "../helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../helpers/fake-device.ts";
import { chromiumMissing, createWebTestContext, startBrowser, type Browser, type WebTestContext } from "./chromium.ts";

/**
 * The README's "back up your first device" walk, in the browser on a fresh install: the empty dashboard says what
 * to do, a credential set, a device with its template and port, Download now, the stored configuration. The
 * device is an SSH server on loopback answering as an IOS switch; the job runs as a collector runs it.
 */
const unavailable = chromiumMissing("test/web/first-run.test.ts");
const PASSWORD = "Lab-Pass-2026";

describe.skipIf(unavailable)("the first backup, from the browser", () => {
  let t: WebTestContext;
  let b: Browser;
  let device: FakeDevice;

  beforeAll(async () => {
    t = await createWebTestContext();
    await t.user({ username: "admin1" });
    await t.user({ username: "viewer1", role: "viewer" });
    const { prompt, script } = iosScript("lab-sw-1", [
      "hostname lab-sw-1",
      "interface Gi1/0/1",
      " description uplink",
      "end",
    ]);
    device = await startFakeDevice({ script, initPrompt: prompt, auth: { username: "backup", password: PASSWORD } });
    b = await startBrowser(t);
  });
  afterAll(async () => {
    await b?.close();
    await device?.close();
    await t?.close();
  });

  /** What a collector does with the job the page queued. */
  async function runQueuedDownload() {
    const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
    expect(job?.type).toBe("download");
    await runDownloadJob(
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "test-collector",
        limits: DEFAULT_LIMITS,
        connectTimeoutMs: 10_000,
      },
      job!,
      new AbortController().signal,
    );
  }

  it("shows a viewer the steps without links they could not use", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/dashboard`);
    expect(await page.locator("#next-steps li").count()).toBe(3);
    expect(await page.locator("#next-steps a[href='/credentials/new']").count()).toBe(0);
    expect(await page.textContent("#next-steps")).toContain("ask an administrator");
  });

  it("walks an administrator from the empty dashboard to the first stored configuration", async () => {
    const { page, base } = b;
    await b.loginAs("admin1");
    await page.goto(`${base}/dashboard`);
    expect(await page.locator("#next-steps li[data-done=false]").count()).toBe(3);
    await b.shoot("dashboard-empty");

    await page.click("#next-steps a[href='/credentials/new']");
    await page.fill("#c-cred_name", "lab");
    await page.fill("#c-cred_username", "backup");
    await page.fill("#c-cred_password", PASSWORD);
    await page.click("text=Add credential set");
    await page.waitForURL(/done=created/);

    await page.goto(`${base}/dashboard`);
    expect(await page.locator("#next-steps li[data-done=true]").count()).toBe(1);
    await page.click("#next-steps a[href='/devices/new']");
    await page.fill("#f-device_name", "lab-sw-1");
    await page.fill("#f-device_ip", "127.0.0.1");
    await page.selectOption("#f-device_vendor", "Cisco");
    await page.selectOption("#f-device_template_id", { label: "cisco-ios" });
    await page.selectOption("#f-device_cred_id", { label: "lab" });
    await page.fill("#f-device_port_override", String(device.port));
    await page.click("text=Add device");
    await page.waitForURL(/done=created/);
    const devicePage = page.url().replace(/\?.*/, "");

    await page.click("button:text('Download now')");
    await page.waitForURL(/\?job=\d+/);
    await runQueuedDownload();
    await page.goto(devicePage);
    await page.click("#backups h3:has-text('show running-config') + .table-wrap a:text('v1')");
    expect(await page.textContent("main")).toContain("description uplink");
    expect(device.unexpected).toEqual([]);

    await page.goto(`${base}/dashboard`);
    expect(await page.locator("#next-steps").count()).toBe(0);
  });
});
