import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, jobs, webhooks } from "../../src/db/schema/index.ts";
import { logDelivery } from "../../src/modules/webhooks/service.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Webhook subscriptions from the browser: the secret shown once, ping, the delivery log, redeliver. */
const unavailable = chromiumMissing("test/web/webhooks.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const URL_1 = "https://hooks.example.net/netkeep";

describe.skipIf(unavailable)("webhooks in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const hook = async (url: string) => (await t.db.select().from(webhooks).where(eq(webhooks.url, url)))[0];
  const jobCount = async () => (await t.db.select({ id: jobs.id }).from(jobs)).length;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["system.read", "system.write", "devices.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a subscription and shows its signing secret once", async () => {
    const { page, base } = b;
    await page.goto(`${base}/webhooks`);
    await page.click("text=Add a webhook");
    await page.fill("#w-url", URL_1);
    await page.fill("#w-description", HOSTILE);
    await page.check("input[name=event_types][value='config.changed']");
    await page.click("button:text('Add webhook')");
    const secret = (await page.textContent("#secret-value"))!;
    expect(secret).toMatch(/^whsec_/);
    await b.shoot("webhook-secret");
    const row = (await hook(URL_1))!;
    expect(row.eventTypes).toEqual(["config.changed"]);
    expect(row.description).toBe(HOSTILE);
    // The secret is stored encrypted and never shown again.
    expect(await t.secrets.decrypt(row.secretEnc)).toBe(secret);
    await page.goto(`${base}/webhooks/${row.id}`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.textContent("main")).toContain(HOSTILE);
    await page.goto(`${base}/webhooks`);
    await b.shoot("webhooks");
  });

  it("shows a refused address next to its field and keeps what was typed", async () => {
    const { page, base } = b;
    await page.goto(`${base}/webhooks/new`);
    await page.fill("#w-url", "http://169.254.169.254/latest/meta-data");
    await page.check("input[name=event_types][value='backup.failed']");
    await page.click("button:text('Add webhook')");
    expect(await page.textContent("#w-url-error")).toContain("169.254.169.254");
    expect(await page.isChecked("input[name=event_types][value='backup.failed']")).toBe(true);
    expect(await hook("http://169.254.169.254/latest/meta-data")).toBeUndefined();
  });

  it("edits, rotates the secret (shown once), pings, and redelivers from the log", async () => {
    const { page, base } = b;
    const row = (await hook(URL_1))!;
    await page.goto(`${base}/webhooks/${row.id}/edit`);
    await page.uncheck("input[name=enabled]");
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect((await hook(URL_1))!.enabled).toBe(false);

    await page.click("button:text('Rotate the secret')");
    const rotated = (await page.textContent("#secret-value"))!;
    expect(rotated).toMatch(/^whsec_/);
    expect(await t.secrets.decrypt((await hook(URL_1))!.secretEnc)).toBe(rotated);

    const before = await jobCount();
    await page.goto(`${base}/webhooks/${row.id}`);
    await page.click("button:text('Send a test ping')");
    await page.waitForURL(/done=pinged/);
    expect(await jobCount()).toBe(before + 1);
    const [ping] = await t.db.select().from(events).where(eq(events.type, "webhook.ping")).orderBy(desc(events.id));
    // What a collector writes after a failed attempt.
    await logDelivery(t.db, {
      webhookId: row.id,
      eventId: ping!.id,
      eventType: "webhook.ping",
      attempt: 1,
      outcome: "failed",
      statusCode: 500,
      latencyMs: 12,
      responseExcerpt: HOSTILE,
      message: "the receiver answered 500",
      createdAt: t.clock.now(),
    });
    await page.goto(`${base}/webhooks/${row.id}`);
    const logged = page.locator("#delivery-list tbody tr");
    expect(await logged.count()).toBe(1);
    expect(await logged.textContent()).toContain("HTTP 500");
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("webhook-deliveries");
    await page.selectOption("#d-outcome", "delivered");
    await page.click("button:text('Show')");
    expect(await page.locator("#delivery-list").count()).toBe(0);
    await page.goto(`${base}/webhooks/${row.id}`);
    await page.click("button:text('Redeliver')");
    await page.waitForURL(/done=redelivered/);
    expect(await jobCount()).toBe(before + 2);
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    const row = (await hook(URL_1))!;
    await page.goto(`${base}/webhooks/${row.id}`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch(`/webhooks/${id}/rotate-secret`, {
            method: "POST",
            body: "_csrf=nope",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      row.id,
    );
    expect(status).toBe(403);
    expect((await hook(URL_1))!.secretEnc).toBe(row.secretEnc);
  });

  it("gives a scoped role neither the menu entry nor the pages", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    expect(await page.locator(".topnav a", { hasText: "Webhooks" }).count()).toBe(0);
    const row = (await hook(URL_1))!;
    expect((await page.goto(`${base}/webhooks/${row.id}`))!.status()).toBe(403);
    expect((await page.goto(`${base}/webhooks/new`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });

  it("shows a viewer the subscriptions and the log without any way to change them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    const row = (await hook(URL_1))!;
    await page.goto(`${base}/webhooks`);
    expect(await page.locator("#webhook-list").count()).toBe(1);
    expect(await page.locator("text=Add a webhook").count()).toBe(0);
    await page.goto(`${base}/webhooks/${row.id}`);
    expect(await page.locator("#delivery-list tbody tr").count()).toBe(1);
    expect(await page.locator("button", { hasText: /Redeliver|Rotate|ping/ }).count()).toBe(0);
    expect((await page.goto(`${base}/webhooks/${row.id}/edit`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });

  it("deletes a subscription after a confirmation", async () => {
    const { page, base } = b;
    const row = (await hook(URL_1))!;
    await page.goto(`${base}/webhooks`);
    await page.locator("#webhook-list tr", { hasText: URL_1 }).locator("a", { hasText: "Delete" }).click();
    await page.click("button:text('Delete the webhook')");
    await page.waitForURL(/done=deleted/);
    expect(await hook(URL_1)).toBeUndefined();
    expect(row.id).toBeGreaterThan(0);
    expect((await t.call(`/api/v1/webhooks/${row.id}`, { token })).status).toBe(404);
  });
});
