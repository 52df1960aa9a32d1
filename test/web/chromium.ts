import type { Ability } from "../../src/platform/auth/abilities.ts";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, type ServerType } from "@hono/node-server";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { expect, it, vi } from "vitest";
import { TEST_PASSWORD } from "../helpers/app.ts";
import { createWebTestContext, type WebTestContext } from "./client.ts";

/** Debian's headless Chromium, driven by playwright-core. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Why a browser test file cannot run here, or undefined. Without Chromium the file is skipped with a message,
 * except under CI, where a failing test says what is missing.
 */
export function chromiumMissing(file: string): string | undefined {
  const missing = existsSync(CHROMIUM)
    ? undefined
    : `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium)`;
  if (missing) {
    if (process.env.CI) it("runs the browser tests (required in CI)", () => expect.fail(missing));
    else console.warn(`${file} skipped: ${missing}`);
  }
  return missing;
}

/**
 * How long one browser step (a click, a fill, a navigation, a waitForURL) may take. Playwright's own default is
 * far too short on a loaded machine (2 cores, load 5-25: a redirect through the app and a provider can take many
 * seconds), and a step that times out fails a test whose app did nothing wrong. A step that never comes still
 * fails, with Playwright's message naming what it waited for, well inside the test's own timeout below.
 */
export const BROWSER_STEP_TIMEOUT_MS = 60_000;
/** Each test and hook of a browser file: room for a few slow steps in a row (a test sets its own when it needs more). */
export const BROWSER_TEST_TIMEOUT_MS = 240_000;

// Every file that imports this helper drives Chromium: its tests and hooks get the browser's timeouts, not the
// config's 30 s for tests that only call the app in process.
vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS, hookTimeout: BROWSER_TEST_TIMEOUT_MS });

/** Gives every page of a browser context (those opened later too) the generous step timeouts above. */
export function useBrowserStepTimeouts(context: BrowserContext): void {
  context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(BROWSER_STEP_TIMEOUT_MS);
}

/** Where screenshots for review go: outside the repository (WEB_SHOTS overrides). */
export const SHOTS = process.env.WEB_SHOTS ?? join(tmpdir(), "netkeep-web-shots");

export const WIDTHS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

/** The app served on loopback and one browser profile; each `as(username)` is a fresh, logged-in browser context. */
export async function startBrowser(t: WebTestContext) {
  let server: ServerType | undefined;
  const base = await new Promise<string>((resolve) => {
    server = serve({ fetch: t.webApp.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
      resolve(`http://127.0.0.1:${info.port}`),
    );
  });
  const profile = mkdtempSync(join(tmpdir(), "netkeep-chromium-"));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  useBrowserStepTimeouts(context);
  mkdirSync(SHOTS, { recursive: true });
  const page: Page = context.pages()[0] ?? (await context.newPage());
  // Confirmations are answered yes unless a test listens itself.
  page.on("dialog", (dialog) => void dialog.accept());
  return {
    base,
    page,
    context,
    /** Logs out whoever is in, and logs `username` in through the form. */
    async loginAs(username: string) {
      await context.clearCookies();
      await page.goto(`${base}/login`);
      await page.fill("#username", username);
      await page.fill("#password", TEST_PASSWORD);
      await page.click("button[type=submit]");
      await page.waitForURL((url) => url.pathname !== "/login");
    },
    /** The CSRF token of the current page's first form. */
    csrf: () => page.getAttribute("input[name=_csrf]", "value"),
    /** Full-page screenshots at both widths, for review (not asserted). */
    async shoot(name: string) {
      for (const [width, size] of Object.entries(WIDTHS)) {
        await page.setViewportSize(size);
        await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
      }
      await page.setViewportSize(WIDTHS.desktop);
    },
    async close() {
      await context.close();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type Browser = Awaited<ReturnType<typeof startBrowser>>;

/**
 * The cast the form tests play: `admin1` (an administrator, logged in), `viewer1` (the built-in viewer role), and
 * `edgy`, whose role `edge-ops` holds `permissions` and sees only the devices tagged `edge`.
 */
export async function startBrowserWithCast(t: WebTestContext, permissions: Ability[]): Promise<Browser> {
  await t.user({ username: "admin1" });
  await t.user({ username: "viewer1", role: "viewer" });
  await t.role({ name: "edge-ops", permissions, tags: ["edge"] });
  await t.user({ username: "edgy", role: "edge-ops" });
  const b = await startBrowser(t);
  await b.loginAs("admin1");
  return b;
}

export { createWebTestContext, type WebTestContext };
