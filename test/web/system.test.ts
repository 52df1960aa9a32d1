import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** The system page: health checks and database backups, with the abilities and scope the API requires. */
const unavailable = chromiumMissing("test/web/system.test.ts");

describe.skipIf(unavailable)("the system page in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const backups = async () =>
    (await t.call("/api/v1/system/backups", { token })).body.data as { id: string; sha256: string; bytes: number }[];
  const post = (path: string, csrf: string) =>
    b.page.evaluate(
      async ([p, token]) =>
        (
          await fetch(p!, {
            method: "POST",
            body: `_csrf=${encodeURIComponent(token!)}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      [path, csrf],
    );

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["system.read", "system.write", "devices.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("shows the health checks and runs them on request", async () => {
    const { page, base } = b;
    await page.goto(`${base}/system`);
    const names = (await page.locator("#health-checks tbody tr td:first-child").allTextContents()).sort();
    const api = (await t.call("/api/v1/system/health", { token })).body.data;
    expect(names).toEqual(api.checks.map((x: { name: string }) => x.name.replace(/_/g, " ")).sort());
    await page.click("text=Run the checks now");
    await page.waitForURL(/done=checked/);
    expect(await page.textContent("#health")).toContain("on request");
  });

  it("makes a database backup, lists it and downloads it", async () => {
    const { page, base } = b;
    expect(await backups()).toEqual([]);
    await page.goto(`${base}/system`);
    await page.click("text=Make a backup now");
    await page.waitForURL(/done=backup/);
    const [made] = await backups();
    expect(made).toBeDefined();
    expect(await page.locator("#backup-list tbody tr").count()).toBe(1);
    await b.shoot("system");
    const href = (await page.getAttribute("#backup-list a", "href"))!;
    expect(href).toBe(`/system/backups/${made!.id}/download`);
    const got = await page.evaluate(async (h) => {
      const r = await fetch(h);
      const bytes = new Uint8Array(await r.arrayBuffer());
      return {
        status: r.status,
        type: r.headers.get("content-type"),
        length: bytes.length,
        sum: r.headers.get("x-checksum-sha256"),
        magic: [bytes[0], bytes[1]],
      };
    }, href);
    expect(got).toEqual({
      status: 200,
      type: "application/gzip",
      length: made!.bytes,
      sum: made!.sha256,
      magic: [0x1f, 0x8b],
    });
  });

  it("deletes a database backup after a confirmation page", async () => {
    const { page, base } = b;
    await page.goto(`${base}/system`);
    await page.click("text=Make a backup now");
    await page.waitForURL(/done=backup/);
    const before = await backups();
    const doomed = before[0]!;
    await page.click(`#backup-list tr:has-text('${doomed.id}') >> text=Delete`);
    await page.waitForURL(`${base}/system/backups/${doomed.id}/delete`);
    expect(await page.textContent("#backup-name")).toBe(doomed.id);
    await b.shoot("backup-delete");
    await page.click("button:has-text('Delete the backup')");
    await page.waitForURL(/done=deleted/);
    expect(await page.textContent("[role=status]")).toBe("Database backup deleted.");
    expect((await backups()).map((x) => x.id)).toEqual(before.slice(1).map((x) => x.id));
    expect(await page.locator(`#backup-list >> text=${doomed.id}`).count()).toBe(0);
    // A name that is no backup (markup in it) is a 404 page showing it as text.
    const hostile = await page.goto(`${base}/system/backups/${encodeURIComponent("<img src=x>.sql.gz")}/delete`);
    expect(hostile!.status()).toBe(404);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("refuses a forged delete, and deletes nothing", async () => {
    const { page, base } = b;
    await page.goto(`${base}/system`);
    const before = await backups();
    expect(before.length).toBeGreaterThan(0);
    expect(await post(`/system/backups/${before[0]!.id}/delete`, "nope")).toBe(403);
    expect(await backups()).toEqual(before);
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    await page.goto(`${base}/system`);
    const before = (await backups()).length;
    expect(await post("/system/backups", "nope")).toBe(403);
    expect((await backups()).length).toBe(before);
  });

  it("shows a scoped role no database backup, and refuses it one", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/system`);
    expect(await page.locator("#health-checks").count()).toBe(1);
    expect(await page.locator("#backups").count()).toBe(0);
    const before = (await backups()).length;
    expect(await post("/system/backups", (await b.csrf())!)).toBe(403);
    expect((await backups()).length).toBe(before);
    const [one] = await backups();
    expect((await page.goto(`${base}/system/backups/${one!.id}/download`))!.status()).toBe(403);
    expect(await post(`/system/backups/${one!.id}/delete`, (await b.csrf())!)).toBe(403);
    expect((await backups()).length).toBe(before);
    await b.loginAs("admin1");
  });

  it("lets a viewer list and download backups but neither make nor delete one, nor run the checks", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/system`);
    expect(await page.locator("#backup-list tbody tr").count()).toBe((await backups()).length);
    expect(await page.locator("text=Make a backup now").count()).toBe(0);
    expect(await page.locator("text=Run the checks now").count()).toBe(0);
    expect(await page.locator("#backup-list >> text=Delete").count()).toBe(0);
    expect(await post("/system/backups", (await b.csrf())!)).toBe(403);
    const [kept] = await backups();
    expect(await post(`/system/backups/${kept!.id}/delete`, (await b.csrf())!)).toBe(403);
    expect((await page.goto(`${base}/system/backups/${kept!.id}/delete`))!.status()).toBe(403);
    expect((await backups()).map((x) => x.id)).toContain(kept!.id);
    await b.loginAs("admin1");
  });
});
