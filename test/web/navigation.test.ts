import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowser,
  WIDTHS,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * Every menu item leads to a page, the menu's groups open without JavaScript and fit a phone, a role sees only the
 * items it may open (and no group left empty), and an unknown address answers a page inside the layout (not the
 * API's JSON).
 */
const unavailable = chromiumMissing("test/web/navigation.test.ts");

describe.skipIf(unavailable)("menus and unknown pages in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  /** Every menu link (those in closed groups too) as [label, path]. */
  const links = async () =>
    b.page
      .locator(".topnav a")
      .evaluateAll((links) => links.map((a) => [a.textContent, (a as HTMLAnchorElement).pathname]));
  /** The menu as shown: a link's label, or a group's label with its links' labels. */
  const menu = async () =>
    b.page
      .locator(".topnav")
      .evaluate((nav) =>
        [...nav.children].map((el) =>
          el.tagName === "DETAILS"
            ? [el.querySelector("summary")!.textContent, [...el.querySelectorAll("a")].map((a) => a.textContent)]
            : el.textContent,
        ),
      );
  const labels = async () => (await links()).map(([label]) => label);

  beforeAll(async () => {
    t = await createWebTestContext();
    await t.user({ username: "admin1" });
    await t.user({ username: "viewer1", role: "viewer" });
    await t.role({ name: "edge-ops", permissions: ["devices.read", "system.read", "tasks.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-ops" });
    const token = await t.token();
    await t.call("/api/v1/webhooks", {
      method: "POST",
      token,
      body: { url: "https://hooks.example.test/<b>x</b>", description: "<script>alert(1)</script>" },
    });
    b = await startBrowser(t);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("gives an administrator a grouped menu of real pages: each answers 200 with its heading", async () => {
    await b.loginAs("admin1");
    expect(await menu()).toEqual([
      ["Fleet", ["Dashboard", "Devices", "Discovery", "Tasks", "Reports"]],
      ["Configs", ["Changes", "Search", "Compare exclusions", "Retention and export", "Compliance", "Snippets"]],
      ["Inventory", ["Credentials", "Templates", "Command groups", "Vendors", "Tags", "Device profiles"]],
      [
        "Admin",
        ["Users", "Activity", "Settings", "System", "Zones", "Webhooks", "Mail", "API tokens", "REST API Access"],
      ],
    ]);
    const items = await links();
    for (const [label, path] of items) {
      const res = await b.page.goto(`${b.base}${path}`);
      expect(res!.status(), path!).toBe(200);
      expect(await b.page.locator("h1").first().textContent(), path!).toBeTruthy();
      expect(res!.headers()["content-type"], label!).toContain("text/html");
      // The page's own entry is marked, and so is the group holding it.
      expect(await b.page.locator(".topnav a[aria-current=page]").allTextContents(), path!).toEqual([label]);
    }
    await b.page.goto(`${b.base}/settings/restapi`);
    expect(await b.page.locator(".topnav summary.current").allTextContents()).toEqual(["Admin"]);
    for (const name of ["settings", "compliance", "snippets", "webhooks"]) {
      await b.page.goto(`${b.base}/${name}`);
      await b.shoot(name);
    }
  });

  it("opens a group without JavaScript, one line of menu on a 390 px phone", async () => {
    const page = b.page;
    // netkeep.js only closes menus; without it (blocked here) a group still opens and its links work.
    await page.route("**/assets/netkeep.js*", (route) => route.abort());
    try {
      await page.setViewportSize(WIDTHS.phone);
      await page.goto(`${b.base}/devices`);
      const nav = (await page.locator(".topnav").boundingBox())!;
      const line = (await page.locator(".topnav summary").first().boundingBox())!;
      expect(nav.height).toBeLessThan(line.height * 2);
      expect(nav.x + nav.width).toBeLessThanOrEqual(WIDTHS.phone.width);
      expect(await page.locator(".topnav a", { hasText: "Users" }).isVisible()).toBe(false);
      await page.click(".topnav summary >> text=Admin");
      const users = page.locator(".topnav a", { hasText: "Users" });
      expect(await users.isVisible()).toBe(true);
      const panel = (await page.locator(".menu-group[open] .menu-items").boundingBox())!;
      expect(panel.x).toBeGreaterThanOrEqual(0);
      expect(panel.x + panel.width).toBeLessThanOrEqual(WIDTHS.phone.width);
      await b.shoot("menu-open");
      await users.click();
      await page.waitForURL(`${b.base}/admin/users`);
      expect(await page.textContent("h1")).toBe("Users");
    } finally {
      await page.unroute("**/assets/netkeep.js*");
      await page.setViewportSize(WIDTHS.desktop);
    }
  });

  it("keeps one group open at a time and closes it on Escape or a click elsewhere (with JavaScript)", async () => {
    const page = b.page;
    await page.goto(`${b.base}/devices`);
    // The toggle event that closes the other groups comes after the click: polled.
    const open = () => page.locator(".topnav details[open] summary").allTextContents();
    await page.click(".topnav summary >> text=Fleet");
    await expect.poll(open).toEqual(["Fleet"]);
    await page.click(".topnav summary >> text=Configs");
    await expect.poll(open).toEqual(["Configs"]);
    await page.keyboard.press("Escape");
    await expect.poll(open).toEqual([]);
    await page.click(".topnav summary >> text=Admin");
    await page.click("main h1");
    await expect.poll(open).toEqual([]);
  });

  it("shows hostile names as text", async () => {
    await b.page.goto(`${b.base}/webhooks`);
    expect(await b.page.locator("td", { hasText: "<script>alert(1)</script>" }).count()).toBe(1);
    expect(await b.page.locator("main script, main b").count()).toBe(0);
  });

  it("answers an unknown address with a 404 page inside the layout, logged in or not", async () => {
    const res = await b.page.goto(`${b.base}/settings/nope?x=<i>1</i>`);
    expect(res!.status()).toBe(404);
    expect(res!.headers()["content-type"]).toContain("text/html");
    expect(await b.page.textContent("h1")).toBe("Page not found");
    expect(await b.page.locator(".topnav a", { hasText: "Devices" }).count()).toBe(1);
    await b.shoot("not-found");
    const post = await b.page.evaluate(async () => {
      const r = await fetch("/dashboard", { method: "POST" });
      return [r.status, r.headers.get("content-type")];
    });
    expect(post).toEqual([405, expect.stringContaining("text/html")]);

    await b.context.clearCookies();
    const anonymous = await b.page.goto(`${b.base}/compliance/whatever`);
    expect(anonymous!.status()).toBe(404);
    expect(await b.page.textContent("h1")).toBe("Page not found");
    expect(await b.page.locator(".topnav").count()).toBe(0);
    // The API keeps its JSON.
    const api = await b.page.evaluate(async () => (await fetch("/api/v1/nothing")).headers.get("content-type"));
    expect(api).toContain("application/json");
  });

  it("leaves out of a viewer's menu what only administrators open", async () => {
    await b.loginAs("viewer1");
    const shown = await labels();
    expect(shown).not.toContain("REST API Access");
    expect(shown).toContain("Users");
    expect(shown).toContain("Settings");
    expect(shown).toContain("API tokens");
    await b.page.goto(`${b.base}/settings`);
    expect(await b.page.locator("a[href='/settings/restapi']").count()).toBe(0);
  });

  it("gives a scoped role only its pages and drops a group left empty: no inventory or configs, no webhooks", async () => {
    await b.loginAs("edgy");
    expect(await menu()).toEqual([
      ["Fleet", ["Dashboard", "Devices", "Tasks", "Reports"]],
      ["Admin", ["Settings", "System", "Zones", "API tokens"]],
    ]);
    expect((await b.page.goto(`${b.base}/webhooks`))!.status()).toBe(403);
    expect((await b.page.goto(`${b.base}/discovery`))!.status()).toBe(403);
    expect((await b.page.goto(`${b.base}/compliance`))!.status()).toBe(403);
  });
});
