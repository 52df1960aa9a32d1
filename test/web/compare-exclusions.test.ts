import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Compare exclusions from the browser: list, add (the pattern checked by the API), edit, delete, bulk delete. */
const unavailable = chromiumMissing("test/web/compare-exclusions.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("compare exclusions in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const rules = async () => (await api("/compare-exclusions?per_page=500")).body.data as Record<string, unknown>[];
  const rule = async (pattern: string) => (await rules()).find((r) => r.pattern === pattern);

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["configs.read", "configs.write", "devices.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a rule for one command from the Configs menu, edits it, and deletes it after a confirmation", async () => {
    const { page, base } = b;
    await page.goto(`${base}/changes`);
    await page.click(".topnav summary >> text=Configs");
    await page.click(".topnav a >> text=Compare exclusions");
    await page.click("text=Add a compare exclusion");
    expect(await page.isChecked("#compare-exclusions-enabled")).toBe(true);
    await page.fill("#compare-exclusions-pattern", "^! Last configuration change at ");
    await page.fill("#compare-exclusions-command", "show running-config");
    await page.check("#compare-exclusions-ignore_case");
    await page.click("button:text('Add compare exclusion')");
    await page.waitForURL(/done=created/);
    expect(await rule("^! Last configuration change at ")).toMatchObject({
      command: "show running-config",
      ignore_case: true,
      enabled: true,
    });
    const row = page.locator("#compare-exclusions-list tr", { hasText: "Last configuration change" });
    expect(await row.textContent()).toContain("enabled, ignores case");
    await b.shoot("compare-exclusions");
    await row.locator("a:text('Edit')").click();
    await page.fill("#compare-exclusions-command", "");
    await page.uncheck("#compare-exclusions-enabled");
    await page.click("button:text('Save changes')");
    await page.waitForURL(/done=saved/);
    expect(await rule("^! Last configuration change at ")).toMatchObject({ command: null, enabled: false });
    expect(await row.textContent()).toContain("every command");
    await row.locator("a:text('Delete')").click();
    await page.click("button:text('Delete the compare exclusion')");
    await page.waitForURL(/done=deleted/);
    expect(await rule("^! Last configuration change at ")).toBeUndefined();
  });

  it("shows the API's pattern problem next to the field and keeps what was typed", async () => {
    const { page, base } = b;
    await page.goto(`${base}/compare-exclusions/new`);
    await page.fill("#compare-exclusions-pattern", "(?<=ntp) clock");
    await page.fill("#compare-exclusions-description", "lookbehind");
    await page.click("button:text('Add compare exclusion')");
    expect(await page.textContent("#compare-exclusions-pattern-error")).toBeTruthy();
    expect(await page.inputValue("#compare-exclusions-description")).toBe("lookbehind");
    expect(await rule("(?<=ntp) clock")).toBeUndefined();
    await b.shoot("compare-exclusions-error");
  });

  it("deletes a selection, refuses a forged form, and shows a hostile pattern as text", async () => {
    const { page, base } = b;
    for (const pattern of ["^ntp clock-period", HOSTILE])
      expect((await api("/compare-exclusions", "POST", { pattern })).status).toBe(201);
    await page.goto(`${base}/compare-exclusions`);
    expect(await page.locator("#compare-exclusions-list code", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/compare-exclusions/new", {
            method: "POST",
            body: "_csrf=nope&pattern=forged",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await rule("forged")).toBeUndefined();
    await page.locator("#compare-exclusions-list input[name=ids]").first().check();
    await page.locator("#compare-exclusions-list input[name=ids]").nth(1).check();
    await page.click("button:text('Delete selected')");
    expect(await page.locator("#bulk-delete-list strong", { hasText: HOSTILE }).count()).toBe(1);
    await page.click("button:text('Delete the ticked compare exclusions')");
    await page.waitForURL(/done=bulk-deleted&n=2/);
    expect(await rules()).toEqual([]);
  });

  it("shows a scoped user the rules without controls: a rule applies to devices outside their scope", async () => {
    const { page, base } = b;
    const id = (await api("/compare-exclusions", "POST", { pattern: "^uptime" })).body.data.id;
    await b.loginAs("edgy");
    await page.goto(`${base}/compare-exclusions`);
    expect(await page.textContent("#compare-exclusions-list")).toContain("^uptime");
    expect(await page.locator("text=Add a compare exclusion").count()).toBe(0);
    expect(await page.locator("#compare-exclusions-list a:text('Edit')").count()).toBe(0);
    expect(await page.locator("input[name=ids]").count()).toBe(0);
    expect((await page.goto(`${base}/compare-exclusions/new`))!.status()).toBe(403);
    expect((await page.goto(`${base}/compare-exclusions/${id}/delete`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });

  it("shows a viewer the rules without controls", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/compare-exclusions`);
    expect(await page.textContent("#compare-exclusions-list")).toContain("^uptime");
    expect(await page.locator("text=Add a compare exclusion").count()).toBe(0);
    expect(await page.locator("input[name=ids]").count()).toBe(0);
    expect((await page.goto(`${base}/compare-exclusions/new`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
