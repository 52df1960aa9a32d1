import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevice, storeVersion } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** The activity log and the reports pages in the browser: filters, scope, charts and CSV downloads. */
const unavailable = chromiumMissing("test/web/activity-reports.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const DAY = 86_400_000;

describe.skipIf(unavailable)("activity log and reports in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  const ids: Record<string, number> = {};
  const download = (path: string) => b.page.evaluate(async (p) => (await fetch(p)).text(), path);

  beforeAll(async () => {
    t = await createWebTestContext();
    b = await startBrowserWithCast(t, ["devices.read", "system.read", "users.read", "configs.read"]);
    await t.user({ username: "ops1", role: "operator" });
    await t.role({ name: "reporter", permissions: ["system.read", "devices.read"] });
    await t.user({ username: "reporter1", role: "reporter" });
    const adminToken = await t.token();
    const opsToken = await t.token(undefined, { role: "operator" });
    ids.core = await createDevice(t, adminToken, { device_name: "core-1", device_tags: ["core"] });
    ids.edge = await createDevice(t, opsToken, { device_name: "edge-1", device_model: HOSTILE, device_tags: ["edge"] });
    await t.call(`/api/v1/devices/${ids.core}`, {
      method: "PATCH",
      token: adminToken,
      body: { device_ip: "192.0.2.77" },
    });
    // Changes on three days: the core router twice, the edge one once.
    const now = t.clock.now().getTime();
    for (const [device, daysAgo, text] of [
      [ids.core, 3, "hostname core-1\n"],
      [ids.core, 2, "hostname core-1\nntp server 192.0.2.1\n"],
      [ids.edge, 1, "hostname edge-1\n"],
    ] as const)
      await storeVersion(t, { deviceId: device, at: new Date(now - daysAgo * DAY), text });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("filters the activity log by user, device and action, showing names as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/activity`);
    expect(await page.locator("#activity-list tbody tr").count()).toBeGreaterThanOrEqual(3);
    await b.shoot("activity");
    await page.fill("#f-action", "device.update");
    await page.click("button:text('Apply')");
    expect(await page.locator("#activity-list tbody tr").count()).toBe(1);
    expect(await page.textContent("#activity-list")).toContain("device_ip");
    expect(await page.textContent(".pager")).toBe("1 entry");
    await page.goto(`${base}/activity?filter[device]=${ids.edge}`);
    expect(await page.textContent("#activity-list")).toContain("device.create");
    expect(await page.textContent("#activity-list")).not.toContain("device.update");
    await page.locator("#activity-list summary").first().click();
    expect(await page.textContent("#activity-list")).toContain(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    const opsName = await page.evaluate(() => document.querySelector("#activity-list td:nth-child(2)")!.textContent);
    expect(opsName).toMatch(/^user\d+/);
    await page.goto(`${base}/activity?filter[username]=nobody`);
    expect(await page.textContent(".pager")).toBe("No entries");
  });

  it("answers a bad filter with the API's message", async () => {
    const { page, base } = b;
    const res = await page.goto(`${base}/activity?filter[device]=abc`);
    expect(res!.status()).toBe(422);
    expect(await page.textContent("main")).toContain("filter[device]");
    const bad = await page.goto(`${base}/reports?from=yesterday`);
    expect(bad!.status()).toBe(422);
    expect(await page.textContent("main")).toContain("must be a date such as");
  });

  it("draws the changes per day and offers each report as CSV", async () => {
    const { page, base } = b;
    await page.goto(`${base}/reports`);
    await page.waitForSelector("#changes-chart .uplot");
    const top = await page.locator("#top-changers tbody tr").allTextContents();
    expect(top[0]).toContain("core-1");
    expect(top[0]).toContain("2 changes");
    expect(top[1]).toContain("1 change");
    expect(await page.textContent("#device-stats")).toContain("2 devices");
    await b.shoot("reports");
    const csv = await download((await page.getAttribute("a[href^='/reports/top-changers.csv']", "href"))!);
    expect(csv.split(/\r?\n/)[0]).toBe("device_id,device_name,changes,last_change_at");
    expect(csv).toContain(`${ids.core},core-1,2,`);
    const stats = await download("/reports/devices.csv?group_by=tag");
    expect(stats).toContain("tag,core,1");
  });

  it("counts only a scoped user's devices", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/reports`);
    expect(await page.locator("#top-changers tbody tr").count()).toBe(1);
    expect(await page.textContent("#top-changers")).not.toContain("core-1");
    expect(await download("/reports/top-changers.csv")).not.toContain("core-1");
    await page.goto(`${base}/activity`);
    expect(await page.textContent("#activity-list")).not.toContain("device.update");
    expect((await page.goto(`${base}/activity?filter[device]=${ids.core}`))!.status()).toBe(200);
    expect(await page.textContent(".pager")).toBe("No entries");
  });

  it("leaves Activity out of the menu of a role without users.read, and refuses the page", async () => {
    const { page, base } = b;
    await b.loginAs("reporter1");
    await page.goto(`${base}/reports`);
    expect(await page.locator("nav.topnav a", { hasText: "Reports" }).count()).toBe(1);
    expect(await page.locator("nav.topnav a", { hasText: "Activity" }).count()).toBe(0);
    expect((await page.goto(`${base}/activity`))!.status()).toBe(403);
    await b.loginAs("viewer1");
    await page.goto(`${base}/activity`);
    expect(await page.locator("#activity-list").count()).toBe(1);
    expect(await page.locator("main form[method=post]").count()).toBe(0);
  });
});
