import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { serve, type ServerType } from "@hono/node-server";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECK_NAMES } from "../../src/modules/system/index.ts";
import { apiDocsFiles } from "../../src/adapters/docs/paths.ts";
import { TEST_PASSWORD } from "../helpers/app.ts";
import { claimNextJob, enqueueDeviceJob, PRIORITY } from "../../src/platform/jobs/queue.ts";
import { finishJob } from "../../src/modules/tasks/settle.ts";
import { useBrowserStepTimeouts } from "./chromium.ts";
import { createWebTestContext, type WebTestContext } from "./client.ts";

/**
 * The web interface in a real browser: Debian's headless Chromium driven by playwright-core, against the app
 * served on loopback. One browser session walks through what an administrator does, then a viewer is refused.
 */
const CHROMIUM = "/usr/bin/chromium";
const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

const unavailable = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium)`;
if (unavailable) {
  if (process.env.CI) it("runs the browser tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/web/browser.test.ts skipped: ${unavailable}`);
}

describe.skipIf(unavailable)("the web interface in headless Chromium", () => {
  let t: WebTestContext;
  let server: ServerType;
  let base: string;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  let tokenValue: string;

  beforeAll(async () => {
    t = await createWebTestContext();
    await t.user({ username: "admin1" });
    await t.user({ username: "viewer1", role: "viewer" });
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: t.webApp.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
        resolve(`http://127.0.0.1:${info.port}`),
      );
    });
    profile = mkdtempSync(join(tmpdir(), "netkeep-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    page = context.pages()[0] ?? (await context.newPage());
    // Fail with playwright's own message (which selector, what it saw) well before vitest's test timeout.
    useBrowserStepTimeouts(context);
    // The revoke button asks for confirmation; the administrator says yes.
    page.on("dialog", (dialog) => void dialog.accept());
  });

  afterAll(async () => {
    await context?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  const api = (path: string, token: string) => fetch(`${base}${path}`, { headers: { apitoken: token } });
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  it("logs in through the login form, lands on the dashboard, and reaches REST API Access", async () => {
    await page.goto(`${base}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill("#username", "admin1");
    await page.fill("#password", TEST_PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL(`${base}/dashboard`);
    expect(await page.textContent("h1")).toBe("Dashboard");
    await page.click(".topnav summary >> text=Admin");
    await page.click("text=REST API Access");
    await page.waitForURL(`${base}/settings/restapi`);
    expect(await page.textContent("h1")).toBe("REST API Access");
    expect(await page.textContent(".tabs [aria-current=page]")).toBe("Documentation");
    const cookies = await context.cookies(base);
    const session = cookies.find((c) => c.name === "netkeep_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    // The page's script cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain("netkeep_session");
  });

  it("shows the dashboard: counts, a failing device with its reason, the change pulse drawn as SVG, the health checks", async () => {
    const admin = await t.token();
    const created = await fetch(`${base}/api/v1/devices`, {
      method: "POST",
      headers: { apitoken: admin, "content-type": "application/json" },
      body: JSON.stringify({ device_name: "web-dash-r1", device_ip: "192.0.2.77", device_vendor: "Cisco" }),
    });
    const deviceId = ((await created.json()) as { data: { id: number } }).data.id;
    await enqueueDeviceJob(
      t.db,
      { type: "download", deviceId, trigger: "schedule", priority: PRIORITY.scheduled, maxAttempts: 1 },
      new Date(),
    );
    const job = (await claimNextJob(t.db, "web-test", new Date(), 60_000))!;
    await finishJob(
      t.db,
      job,
      "web-test",
      { outcome: "unreachable", message: "connection refused by 192.0.2.77:22" },
      new Date(),
    );

    await page.goto(`${base}/dashboard`);
    expect(await page.textContent("#device-counts")).toContain("1Devices");
    expect(await page.textContent("#failing-devices tbody")).toContain("connection refused by 192.0.2.77:22");
    const bars = page.locator("#recent-changes svg rect.pulse-day");
    expect(await bars.count()).toBe(30);
    expect(await bars.last().getAttribute("data-date")).toBe(new Date().toISOString().slice(0, 10));
    const box = await page.locator("#recent-changes svg").boundingBox();
    expect(box!.width).toBeGreaterThan(200);
    expect(await page.locator("#health tbody tr").count()).toBe(CHECK_NAMES.length);
    expect(await page.textContent("#health")).toContain("No collector has reported");
    // REST API Access's API Token tab is the one token page, /tokens.
    await page.goto(`${base}/settings/restapi`);
    await page.click(".tabs >> text=API Token");
    await page.waitForURL(`${base}/tokens`);
  });

  it("refuses Generate Token without abilities, then creates a token with two abilities that works on the API", async () => {
    await page.fill("#token-name", "browser token");
    await page.click("text=Generate Token");
    expect(await page.textContent(".alert.error")).toContain("Tick at least one ability");

    await page.check("#ability-devices\\.read");
    await page.check("#ability-users\\.read");
    await page.click("text=Generate Token");
    await page.waitForSelector("#new-token-value");
    tokenValue = (await page.textContent("#new-token-value"))!.trim();
    expect(tokenValue).toMatch(/^nk_/);
    expect(await page.textContent("#new-token .alert.warning")).toContain("shown only once");

    await page.click("#new-token button[data-copy-from]");
    await page.waitForSelector("#new-token .copied");
    expect(await clipboard()).toBe(tokenValue);

    expect((await api("/api/v1/devices", tokenValue)).status).toBe(200);
    expect((await api("/api/v2/users", tokenValue)).status).toBe(200);
    expect((await api("/api/v1/tags", tokenValue)).status).toBe(403);
  });

  it("lists the token without its value, revokes it, and the API refuses it from then on", async () => {
    await page.goto(`${base}/settings/restapi?tab=api-token`);
    expect(new URL(page.url()).pathname).toBe("/tokens");
    const row = page.locator("#token-list tr", { hasText: "browser token" });
    expect(await row.textContent()).toContain("admin1");
    expect(await row.textContent()).toContain("devices.read");
    expect(await row.textContent()).toContain("users.read");
    expect(await row.locator(".badge").textContent()).toBe("active");
    expect(await page.content()).not.toContain(tokenValue);

    await row.locator("button", { hasText: "Revoke" }).click();
    await page.waitForSelector(".alert.success");
    expect(await page.textContent(".alert.success")).toContain("Token revoked");
    expect(await page.locator("#token-list tr", { hasText: "browser token" }).locator(".badge").textContent()).toBe(
      "revoked",
    );
    expect((await api("/api/v1/devices", tokenValue)).status).toBe(401);
  });

  it("opens each tab by deep link", async () => {
    for (const [tab, label, marker] of [
      ["documentation", "Documentation", "article[data-method=POST][data-path='/api/v1/devices']"],
      ["ai-agent-docs", "AI Agent Docs", "#ai-docs-v1"],
    ] as const) {
      await page.goto(`${base}/settings/restapi?tab=${tab}`);
      expect(await page.textContent(".tabs [aria-current=page]")).toBe(label);
      expect(await page.locator(marker).count(), tab).toBe(1);
    }
    await page.goto(`${base}/settings/restapi?tab=documentation`);
    await page.click(".versions >> text=REST API v2");
    await page.waitForURL(`${base}/settings/restapi?tab=documentation&version=v2`);
    expect(await page.locator("article[data-path^='/api/v2/']").count()).toBeGreaterThan(0);
    expect(await page.locator("article[data-path^='/api/v1/']").count()).toBe(0);
  });

  it("shows the command for a missing file, and once it has run, views, copies and downloads the file", async () => {
    await page.goto(`${base}/settings/restapi?tab=ai-agent-docs`);
    const card = page.locator("#ai-docs-v1");
    expect(await card.getAttribute("data-state")).toBe("absent");
    const command = (await card.locator("#command-v1").textContent())!;
    expect(command).toBe("npm run svc:api-docs:build -- --api-version=v1");

    // The operator runs exactly that, from the application root, for this server's storage.
    const [program, ...args] = command.split(" ");
    await run(program!, args, {
      cwd: root,
      env: { ...process.env, STORAGE_DIR: t.dir, APP_URL: t.config.appUrl, APP_NAME: t.config.appName },
    });
    const written = readFileSync(apiDocsFiles(t.dir, "v1").markdown, "utf8");
    expect(written.startsWith("# REST API v1\n")).toBe(true);

    await page.reload();
    expect(await card.getAttribute("data-state")).toBe("present");
    expect(await page.locator("#ai-docs-v2").getAttribute("data-state")).toBe("absent");
    expect(await card.locator("[data-size-bytes]").getAttribute("data-size-bytes")).toBe(
      String(Buffer.byteLength(written)),
    );

    await card.locator("button", { hasText: "Copy" }).click();
    await card.locator(".copied").waitFor();
    expect(await card.locator(".copied").textContent()).toBe("Copied");
    expect(await clipboard()).toBe(written);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      card.locator("a", { hasText: "Download" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("netkeep-api-v1-docs.md");
    expect(readFileSync((await download.path())!, "utf8")).toBe(written);

    await card.locator("a", { hasText: "View" }).click();
    await page.waitForURL(`${base}/settings/restapi/ai-agent-docs/v1`);
    expect(await page.textContent("pre#markdown")).toBe(written);
  });

  it("logs out, and refuses the settings to a non-admin user", async () => {
    await page.goto(`${base}/settings/restapi`);
    await page.click("text=Log out");
    await page.waitForURL(`${base}/login?logged_out`);
    expect((await context.cookies(base)).some((c) => c.name === "netkeep_session")).toBe(false);

    await page.fill("#username", "viewer1");
    await page.fill("#password", TEST_PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL(`${base}/dashboard`);
    await page.goto(`${base}/settings/restapi`);
    expect(await page.textContent("h1")).toBe("Administrators only");
    expect(await page.locator("#token-name").count()).toBe(0);
    const download = await page.evaluate(
      async () => (await fetch("/settings/restapi/ai-agent-docs/v1/download")).status,
    );
    expect(download).toBe(403);
  });
});
