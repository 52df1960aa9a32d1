import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityLog, appSettings } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Every settings section from the browser: the API's checks, write-only secrets, and only for those who may. */
const unavailable = chromiumMissing("test/web/settings-edit.test.ts");
const HOSTILE = `</textarea><img src=x onerror=alert(1)>`;
const SMTP_PASSWORD = "smtp-pw-never-shown-4410";

describe.skipIf(unavailable)("the settings page in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const api = async () => (await t.call("/api/v1/settings", { token })).body.data;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    // edge-ops may write settings but sees only the edge devices: the API refuses it, so the page has no form.
    b = await startBrowserWithCast(t, ["system.read", "system.write"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("has a form for every section GET /api/v1/settings shows", async () => {
    const { page, base } = b;
    await page.goto(`${base}/settings`);
    const sections = Object.entries(await api())
      .filter(([, v]) => v !== null && typeof v === "object" && !Array.isArray(v))
      .map(([k]) => k);
    expect(sections).toEqual(expect.arrayContaining(["collector", "smtp", "ldap", "oidc", "mfa", "tokens"]));
    for (const name of ["general", ...sections])
      expect(await page.locator(`form[action='/settings/${name}']`).count(), name).toBe(1);
    await b.shoot("settings-edit");
  });

  it("saves a section through the API's service: values, a secret written but never shown, the activity log", async () => {
    const { page, base } = b;
    await page.goto(`${base}/settings`);
    const smtp = page.locator("#settings-smtp");
    expect(await smtp.textContent()).toContain("not set");
    await page.fill("#s-smtp-host", "smtp.example.net");
    await page.fill("#s-smtp-port", "2525");
    await page.selectOption("#s-smtp-encryption", "tls");
    await page.fill("#s-smtp-password", SMTP_PASSWORD);
    await smtp.locator("button[type=submit]").click();
    await page.waitForURL(/saved=smtp/);
    expect(await page.textContent("[role=status]")).toContain("Saved: smtp");
    expect(await page.textContent("#settings-smtp")).toContain("set (never shown)");
    expect(await page.content()).not.toContain(SMTP_PASSWORD);
    expect((await api()).smtp).toMatchObject({
      host: "smtp.example.net",
      port: 2525,
      encryption: "tls",
      has_password: true,
    });
    // A boolean and a group mapping in another section; the secret above stays when the form is sent again empty.
    await page.selectOption("#s-mfa-required_for", "admins");
    await page.locator("#settings-mfa button[type=submit]").click();
    await page.waitForURL(/saved=mfa/);
    expect((await api()).mfa.required_for).toBe("admins");
    await page.locator("#settings-smtp button[type=submit]").click();
    await page.waitForURL(/saved=smtp/);
    expect((await api()).smtp.has_password).toBe(true);
    const log = await t.db.select().from(activityLog).where(eq(activityLog.action, "settings.update"));
    expect(log.some((l) => JSON.stringify(l.changes).includes('"smtp.port"'))).toBe(true);
    expect(JSON.stringify(log)).not.toContain(SMTP_PASSWORD);
    // Removing the stored secret is a tick, not an empty field.
    await page.check("#settings-smtp input[name=remove_password]");
    await page.locator("#settings-smtp button[type=submit]").click();
    await page.waitForURL(/saved=smtp/);
    expect((await api()).smtp.has_password).toBe(false);
  });

  it("shows the API's problems next to their fields and saves nothing of the section", async () => {
    const { page, base } = b;
    await page.goto(`${base}/settings`);
    await page.fill("#s-collector-connect_timeout_seconds", "0");
    await page.fill("#s-collector-retries", "many");
    await page.locator("#settings-collector button[type=submit]").click();
    expect(await page.textContent("#s-collector-connect_timeout_seconds-error")).toContain("must be at least 1");
    expect(await page.textContent("#s-collector-retries-error")).toContain("must be a whole number");
    expect(await page.inputValue("#s-collector-retries")).toBe("many");
    expect((await api()).collector).toMatchObject({ connect_timeout_seconds: 30, retries: 1 });
    // A check the service makes (a role that does not exist), on its field too.
    await page.goto(`${base}/settings`);
    await page.fill("#s-ldap-group_roles", "netops = no-such-role");
    await page.locator("#settings-ldap button[type=submit]").click();
    expect(await page.textContent("#s-ldap-group_roles-error")).toContain("which does not exist");
    await page.fill("#s-ldap-directories", "[{");
    await page.locator("#settings-ldap button[type=submit]").click();
    expect(await page.textContent("#s-ldap-directories-error")).toContain("must be a JSON list");
  });

  it("refuses a form without this session's CSRF token, and changes nothing", async () => {
    const { page, base } = b;
    await page.goto(`${base}/settings`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/settings/collector", {
            method: "POST",
            body: "_csrf=forged&connect_timeout_seconds=5&command_timeout_seconds=5&retries=0",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect((await api()).collector.connect_timeout_seconds).toBe(30);
  });

  it("shows a hostile value as text, inside its field", async () => {
    const { page, base } = b;
    await page.goto(`${base}/settings`);
    await page.fill("#s-general-login_banner", HOSTILE);
    await page.locator("#settings-general button[type=submit]").click();
    await page.waitForURL(/saved=general/);
    expect(await page.inputValue("#s-general-login_banner")).toBe(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    expect((await api()).login_banner).toBe(HOSTILE);
  });

  it("gives no form to a viewer, nor to a role that may write settings but does not see every device", async () => {
    const { page, base } = b;
    for (const who of ["viewer1", "edgy"]) {
      await b.loginAs(who);
      const res = await page.goto(`${base}/settings`);
      expect(res!.status(), who).toBe(200);
      expect(await page.locator("form[action^='/settings/']:not([action^='/settings/smtp/test'])").count(), who).toBe(
        0,
      );
      // Sending a test mail changes no setting: it needs system.write only, as its API route.
      expect(await page.locator("#test-mail").count(), who).toBe(who === "edgy" ? 1 : 0);
      expect(await page.textContent("main"), who).toContain("timezone");
    }
    // Posting anyway: refused, nothing changed.
    const before = await t.db.select().from(appSettings);
    const csrf = await b.csrf();
    const status = await page.evaluate(
      async (token) =>
        (
          await fetch("/settings/collector", {
            method: "POST",
            body: `_csrf=${token}&connect_timeout_seconds=5&command_timeout_seconds=5&retries=0`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      csrf,
    );
    expect(status).toBe(403);
    expect(await t.db.select().from(appSettings)).toEqual(before);
    await b.loginAs("viewer1");
    const viewerStatus = await page.evaluate(
      async (token) =>
        (
          await fetch("/settings/collector", {
            method: "POST",
            body: `_csrf=${token}&retries=0`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      await b.csrf(),
    );
    expect(viewerStatus).toBe(403);
    await b.loginAs("admin1");
  });
});
