import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTokens } from "../../src/db/schema/index.ts";
import { chromiumMissing, createWebTestContext, startBrowser, type Browser, type WebTestContext } from "./chromium.ts";

/** API tokens for every user: their own, with abilities within their role; administrators see and revoke all. */
const unavailable = chromiumMissing("test/web/tokens.test.ts");
const HOSTILE = "<img src=x onerror=alert(1)>";

describe.skipIf(unavailable)("API tokens in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let viewerToken = "";

  beforeAll(async () => {
    t = await createWebTestContext();
    await t.user({ username: "admin1" });
    await t.user({ username: "viewer1", role: "viewer" });
    await t.user({ username: "viewer2", role: "viewer" });
    b = await startBrowser(t);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  const api = (path: string, token: string) =>
    b.page.evaluate(
      async ([path, token]) => (await fetch(path!, { headers: { apitoken: token! } })).status,
      [path, token],
    );

  it("lets a viewer create a token of their own, offering only their role's abilities", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.click(".topnav summary >> text=Admin");
    await page.click(".topnav >> text=API tokens");
    await page.waitForURL(`${base}/tokens`);
    expect(await page.locator("#ability-devices\\.write").count()).toBe(0);
    expect(await page.locator("#ability-devices\\.read").count()).toBe(1);
    await page.fill("#token-name", HOSTILE);
    await page.check("#ability-devices\\.read");
    await page.click("text=Generate Token");
    viewerToken = (await page.textContent("#new-token-value"))!.trim();
    expect(viewerToken).toMatch(/^nk_/);
    expect(await page.locator("#token-list td", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("tokens");
    expect(await api("/api/v1/devices", viewerToken)).toBe(200);
    expect(await api("/api/v1/tags", viewerToken)).toBe(403);
  });

  it("refuses abilities beyond the role, a token without a name, and a forged form", async () => {
    const { page, base } = b;
    const csrf = await b.csrf();
    const answers = await page.evaluate(async (csrf) => {
      const post = async (body: string) => {
        const r = await fetch("/tokens", {
          method: "POST",
          body,
          headers: { "content-type": "application/x-www-form-urlencoded" },
        });
        return [r.status, await r.text()] as const;
      };
      return [
        await post(`_csrf=${csrf}&name=wide&abilities=devices.write`),
        await post(`_csrf=${csrf}&name=&abilities=devices.read`),
        await post("_csrf=forged&name=x&abilities=devices.read"),
      ];
    }, csrf);
    expect(answers[0]![0]).toBe(422);
    expect(answers[0]![1]).toContain("Your role does not grant: devices.write.");
    expect(answers[1]![0]).toBe(422);
    expect(answers[1]![1]).toContain("Name is required");
    expect(answers[2]![0]).toBe(403);
    await page.goto(`${base}/tokens`);
    expect(await page.locator("#token-list tbody tr").count()).toBe(1);
  });

  it("hides one user's tokens from another, who cannot revoke them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer2");
    await page.goto(`${base}/tokens`);
    expect(await page.locator("#token-list").count()).toBe(0);
    const [{ id }] = (await t.db.select({ id: apiTokens.id }).from(apiTokens)) as [{ id: number }];
    const status = await page.evaluate(
      async ([id, csrf]) =>
        (
          await fetch(`/tokens/${id}/revoke`, {
            method: "POST",
            body: `_csrf=${csrf}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      [id, await b.csrf()] as const,
    );
    expect(status).toBe(404);
    expect(await api("/api/v1/devices", viewerToken)).toBe(200);
  });

  it("shows an administrator every user's tokens, and revokes another user's", async () => {
    const { page, base } = b;
    await b.loginAs("admin1");
    await page.goto(`${base}/tokens`);
    const row = page.locator("#token-list tr", { hasText: "viewer1" });
    expect(await row.count()).toBe(1);
    await row.locator("button", { hasText: "Revoke" }).click();
    await page.waitForURL(`${base}/tokens?done=revoked`);
    expect(await page.locator("#token-list tr", { hasText: "viewer1" }).locator(".badge").textContent()).toBe(
      "revoked",
    );
    expect(await api("/api/v1/devices", viewerToken)).toBe(401);
  });
});
