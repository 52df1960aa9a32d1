import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Mail subscriptions per user from the browser, with the users API's abilities and its rule on other users. */
const unavailable = chromiumMissing("test/web/mail.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("mail subscriptions in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const subs = async (id: number) => (await t.call(`/api/v1/users/${id}/mail-subscriptions`, { token })).body.data;
  const userId = async (name: string) =>
    (await t.call(`/api/v1/users?filter[username]=${encodeURIComponent(name)}`, { token })).body.data[0].id as number;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["users.read", "users.write", "tags.read", "devices.read"]);
    await t.call("/api/v1/tags", { method: "POST", token, body: { name: HOSTILE } });
    await t.call("/api/v1/tags", { method: "POST", token, body: { name: "core" } });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("sets one's own subscriptions, tag names shown as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/mail`);
    expect(await page.locator("main img").count()).toBe(0);
    await page.check("#m-task_failures");
    await page.check("#m-config_changes");
    await page.locator("label.check", { hasText: "core" }).locator("input").check();
    await page.click("text=Save subscriptions");
    await page.waitForURL(/done=saved/);
    await b.shoot("mail");
    const core = (await t.call("/api/v1/tags?filter[name]=core", { token })).body.data[0].id;
    expect(await subs(await userId("admin1"))).toMatchObject({
      task_failures: true,
      config_changes: true,
      compliance_failures: false,
      config_change_tag_ids: [core],
    });
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    await page.goto(`${base}/mail`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/mail", {
            method: "POST",
            body: "_csrf=nope&compliance_failures=true",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect((await subs(await userId("admin1"))).compliance_failures).toBe(false);
  });

  it("does not let a scoped user switch off an administrator's mail", async () => {
    const { page, base } = b;
    const admin = await userId("admin1");
    await b.loginAs("edgy");
    await page.goto(`${base}/mail?user=${admin}`);
    await page.uncheck("#m-task_failures");
    await page.click("text=Save subscriptions");
    expect(await page.textContent("h1")).toBe("Refused");
    expect((await subs(admin)).task_failures).toBe(true);
    await b.loginAs("admin1");
  });

  it("shows a viewer the subscriptions without a way to change them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/mail?user=${await userId("admin1")}`);
    expect(await page.isChecked("#m-task_failures")).toBe(true);
    expect(await page.isDisabled("#m-task_failures")).toBe(true);
    expect(await page.locator("text=Save subscriptions").count()).toBe(0);
    await b.loginAs("admin1");
  });
});
