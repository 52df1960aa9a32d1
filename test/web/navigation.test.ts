import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, createWebTestContext, startBrowser, type Browser, type WebTestContext } from "./chromium.ts";

/**
 * Every menu item leads to a page, a role sees only the items it may open, and an unknown address answers a page
 * inside the layout (not the API's JSON).
 */
const unavailable = chromiumMissing("test/web/navigation.test.ts");

describe.skipIf(unavailable)("menus and unknown pages in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  const menu = async () =>
    b.page
      .locator(".topnav a")
      .evaluateAll((links) => links.map((a) => [a.textContent, (a as HTMLAnchorElement).pathname]));

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

  it("gives an administrator a menu of real pages: each answers 200 with its heading, none is a grey label", async () => {
    await b.loginAs("admin1");
    const items = await menu();
    expect(items.map(([label]) => label)).toEqual([
      "Dashboard",
      "Devices",
      "Discovery",
      "Credentials",
      "Templates",
      "Command groups",
      "Vendors",
      "Tags",
      "Device profiles",
      "Changes",
      "Search",
      "Tasks",
      "Compliance",
      "Snippets",
      "Webhooks",
      "Mail",
      "Reports",
      "Users",
      "Activity",
      "Settings",
      "Zones",
      "System",
      "API tokens",
      "REST API Access",
    ]);
    expect(await b.page.locator(".topnav span").count()).toBe(0);
    for (const [label, path] of items) {
      const res = await b.page.goto(`${b.base}${path}`);
      expect(res!.status(), path!).toBe(200);
      expect(await b.page.locator("h1").first().textContent(), path!).toBeTruthy();
      expect(res!.headers()["content-type"], label!).toContain("text/html");
    }
    for (const name of ["settings", "compliance", "snippets", "webhooks"]) {
      await b.page.goto(`${b.base}/${name}`);
      await b.shoot(name);
    }
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
    const labels = (await menu()).map(([label]) => label);
    expect(labels).not.toContain("REST API Access");
    expect(labels).toContain("Users");
    expect(labels).toContain("Settings");
    await b.page.goto(`${b.base}/settings`);
    expect(await b.page.locator("a[href='/settings/restapi']").count()).toBe(0);
  });

  it("gives a scoped role only its pages: no webhooks (they carry every device's events), no discovery, no compliance", async () => {
    await b.loginAs("edgy");
    expect((await menu()).map(([label]) => label)).toEqual([
      "Dashboard",
      "Devices",
      "Tasks",
      "Reports",
      "Settings",
      "Zones",
      "System",
      "API tokens",
    ]);
    expect((await b.page.goto(`${b.base}/webhooks`))!.status()).toBe(403);
    expect((await b.page.goto(`${b.base}/discovery`))!.status()).toBe(403);
    expect((await b.page.goto(`${b.base}/compliance`))!.status()).toBe(403);
  });
});
