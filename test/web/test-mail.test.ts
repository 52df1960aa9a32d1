import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmtpSink, smtpSinkAvailable } from "../helpers/smtp.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * **Send a test mail** on /settings, against a real SMTP server on loopback (aiosmtpd): the API's test-send,
 * its refusals shown on the page, behind CSRF, and only for a role with system.write.
 */
const noChromium = chromiumMissing("test/web/test-mail.test.ts");
const noSink = smtpSinkAvailable()
  ? undefined
  : "python3 with aiosmtpd is not installed (apt-get install python3-aiosmtpd)";
if (noSink && !noChromium) {
  if (process.env.CI) it("has an SMTP server to test against (required in CI)", () => expect.fail(noSink));
  else console.warn(`test/web/test-mail.test.ts skipped: ${noSink}`);
}
const HOSTILE = `"><img src=x onerror=window.pwned=1>`;

describe.skipIf(noChromium || noSink)("send a test mail from the settings page, in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let token: string;

  const post = (body: string) =>
    b.page.evaluate(
      async (body) =>
        (
          await fetch("/settings/smtp/test", {
            method: "POST",
            body,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      body,
    );
  const send = async (to: string) => {
    await b.page.goto(`${b.base}/settings`);
    await b.page.fill("#test-mail-to", to);
    await b.page.click("button:has-text('Send a test mail')");
    // The answer opens at the test-send's card, where its outcome is.
    await b.page.waitForURL(/\/settings\/smtp\/test#test-mail$/);
  };

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    sink = await startSmtpSink();
    b = await startBrowserWithCast(t, ["system.read", "system.write"]);
  });
  afterAll(async () => {
    await b?.close();
    await sink?.close();
    await t?.close();
  });

  it("says SMTP is not set up yet, in the API's words, and sends nothing", async () => {
    await send("noc@example.net");
    expect(await b.page.textContent("#test-mail [role=alert]")).toMatch(/smtp\.host/);
    expect(sink.received()).toEqual([]);
  });

  it("sends one message through the saved SMTP settings and says the server took it", async () => {
    const set = await t.call("/api/v1/settings", {
      method: "PATCH",
      token,
      body: { smtp: { host: "127.0.0.1", port: sink.port, encryption: "none", from_address: "netkeep@example.net" } },
    });
    expect(set.status).toBe(200);
    await send("noc@example.net");
    expect(await b.page.textContent("#test-mail [role=status]")).toBe(
      `Sent a test message to noc@example.net through 127.0.0.1:${sink.port}`,
    );
    const [mail] = sink.received();
    expect(mail).toMatchObject({ rcpt_tos: ["noc@example.net"], subject: "[netkeep] Test message" });
    expect(mail!.text).toContain("sent by admin1");
    await b.shoot("settings-test-mail");
  });

  it("shows a bad address under its field, keeping it as typed (as text), and sends nothing", async () => {
    const already = sink.received().length;
    await send(HOSTILE);
    expect(await b.page.textContent("#test-mail-to-error")).toBe("must be an e-mail address");
    expect(await b.page.inputValue("#test-mail-to")).toBe(HOSTILE);
    expect(await b.page.locator("main img").count()).toBe(0);
    expect(await b.page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(sink.received().length).toBe(already);
  });

  it("refuses a forged form and sends nothing", async () => {
    const already = sink.received().length;
    await b.page.goto(`${b.base}/settings`);
    expect(await post("_csrf=forged&to=noc%40example.net")).toBe(403);
    expect(sink.received().length).toBe(already);
  });

  it("gives a viewer no test-send, and refuses it the form", async () => {
    const already = sink.received().length;
    await b.loginAs("viewer1");
    await b.page.goto(`${b.base}/settings`);
    expect(await b.page.locator("#settings-smtp").count()).toBe(1);
    expect(await b.page.locator("#test-mail").count()).toBe(0);
    expect(await post(`_csrf=${encodeURIComponent((await b.csrf())!)}&to=noc%40example.net`)).toBe(403);
    expect(sink.received().length).toBe(already);
    await b.loginAs("admin1");
  });
});
