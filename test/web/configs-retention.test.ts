import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevice, day, storeVersion } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * Stored configurations from the browser: deleting one version (DELETE /configs/{id}) after a confirmation page,
 * the retention policy (GET/PUT /configs/retention-policy), the purge of what it no longer keeps (POST
 * /configs/purge, its dry run as the confirmation) and the export (GET /configs/export).
 */
const unavailable = chromiumMissing("test/web/configs-retention.test.ts");
const HOSTILE = `edge-"><img/src=x/onerror=alert(1)>`;

describe.skipIf(unavailable)("configurations: delete, retention, purge, export in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const dev: Record<string, number> = {};
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const versionIds = async (deviceId: number) =>
    ((await api(`/configs/all-by-deviceid/${deviceId}?per_page=100`)).body.data as { id: number }[]).map((c) => c.id);
  /** Stores `count` different versions of the device's running config, day after day; their ids, oldest first. */
  const store = async (deviceId: number, count: number, from = 1) => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++)
      ids.push(
        (await storeVersion(t, { deviceId, at: day(from + i), text: `hostname d${deviceId}\nbanner v${from + i}\n` }))
          .configId!,
      );
    return ids;
  };
  const postStatus = (path: string, body: string) =>
    b.page.evaluate(
      async ([path, body]) =>
        (
          await fetch(path!, {
            method: "POST",
            body,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      [path, body],
    );

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["devices.read", "configs.read", "configs.write"]);
    dev.edge = await createDevice(t, token, { device_name: HOSTILE, device_tags: ["edge"] });
    dev.core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("deletes the latest version after a confirmation naming the version that becomes the latest", async () => {
    const { page, base } = b;
    const [v1, v2] = await store(dev.core!, 2);
    await page.goto(`${base}/configs/${v2}`);
    await page.click(`a[href="/configs/${v2}/delete"]`);
    await page.waitForURL(`${base}/configs/${v2}/delete`);
    expect(await page.textContent("#delete-consequence")).toContain(
      "It is the latest version: v1 becomes the latest (nothing is renumbered). The other version stays, with its number.",
    );
    await b.shoot("config-delete");
    await page.click("button:text('Delete the version')");
    expect(await page.textContent("[role=status]")).toBe(`Config ${v2} deleted`);
    expect(await versionIds(dev.core!)).toEqual([v1]);
    const left = (await api(`/configs/${v1}`)).body.data;
    expect(left.latest).toBe(true);
  });

  it("deletes a device's only version, saying beforehand it leaves none, with the hostile name as text", async () => {
    const { page, base } = b;
    const [only] = await store(dev.edge!, 1);
    await page.goto(`${base}/configs/${only}/delete`);
    expect(await page.textContent("h1")).toBe(`Delete v1 of ${HOSTILE}: show running-config?`);
    expect(await page.textContent("#delete-consequence")).toBe(
      `It is the only stored version of show running-config for ${HOSTILE}: the device will have none until its next backup.`,
    );
    expect(await page.locator("main img").count()).toBe(0);
    await page.click("button:text('Delete the version')");
    expect(await page.textContent("[role=status]")).toBe(`Config ${only} deleted`);
    expect(await versionIds(dev.edge!)).toEqual([]);
  });

  it("refuses forged forms: nothing is deleted, changed or purged", async () => {
    const { page, base } = b;
    const [v] = await store(dev.core!, 1, 10);
    await api("/configs/retention-policy", "PUT", { keep_versions: 1 });
    const before = await versionIds(dev.core!);
    await page.goto(`${base}/configs/retention`);
    expect(await postStatus(`/configs/${v}/delete`, "_csrf=nope")).toBe(403);
    expect(await postStatus("/configs/retention", "_csrf=nope&keep_days=5")).toBe(403);
    expect(await postStatus("/configs/purge", `_csrf=nope&expected=${before.length - 1}`)).toBe(403);
    expect(await versionIds(dev.core!)).toEqual(before);
    expect((await api("/configs/retention-policy")).body.data.keep_days).toBeNull();
    await api("/configs/retention-policy", "PUT", {});
  });

  it("changes the retention policy, a bad value said under its field with what was typed kept", async () => {
    const { page, base } = b;
    await page.goto(`${base}/dashboard`);
    await page.click(".topnav summary >> text=Configs");
    await page.click(".topnav a >> text=Retention and export");
    await page.waitForURL(`${base}/configs/retention`);
    await page.fill("#r-keep_days", "0");
    await page.fill("#r-keep_versions", "12");
    await page.click("button:text('Save the policy')");
    expect(await page.textContent("#r-keep_days-error")).toBe("must be at least 1");
    expect(await page.inputValue("#r-keep_versions")).toBe("12");
    await page.fill("#r-keep_days", "lots");
    await page.click("button:text('Save the policy')");
    expect(await page.textContent("#r-keep_days-error")).toBe("must be a whole number of days or null");
    expect((await api("/configs/retention-policy")).body.data.keep_versions).toBeNull();
    await page.fill("#r-keep_days", "");
    await page.click("button:text('Save the policy')");
    await page.waitForURL(`${base}/configs/retention`);
    const policy = (await api("/configs/retention-policy")).body.data;
    expect([policy.keep_days, policy.keep_versions]).toEqual([null, 12]);
    expect(await page.textContent("#retention-policy p")).toContain(
      "No age limit; the newest 12 versions of each device and command are kept",
    );
    await b.shoot("configs-retention");
    await api("/configs/retention-policy", "PUT", {});
  });

  it("purges what the policy no longer keeps after a confirmation saying how many versions go", async () => {
    const { page, base } = b;
    await store(dev.edge!, 3, 20);
    await store(dev.core!, 2, 20);
    const edgeBefore = await versionIds(dev.edge!);
    const coreBefore = await versionIds(dev.core!);
    // No limit: nothing to purge, and no button.
    await page.goto(`${base}/configs/purge`);
    expect(await page.textContent("main")).toContain("Nothing to purge.");
    expect(await page.locator("main button").count()).toBe(0);
    await api("/configs/retention-policy", "PUT", { keep_versions: 1 });
    const expected = edgeBefore.length - 1 + (coreBefore.length - 1);
    await page.goto(`${base}/configs/retention`);
    await page.click("#purge a:text('Purge…')");
    await page.waitForURL(`${base}/configs/purge`);
    expect(await page.textContent("h1")).toBe(`Purge ${expected} configuration versions?`);
    expect(await page.textContent("#purge-counts li")).toBe(`${expected} configuration versions of 2 devices`);
    expect(await page.locator("main table tbody tr").count()).toBe(expected);
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("configs-purge");
    // A new version between the confirmation and the click: the new count is shown, nothing goes yet.
    await store(dev.core!, 1, 30);
    await page.click(`button:text('Purge ${expected} versions')`);
    expect(await page.textContent(".alert.error")).toContain(`now ${expected + 1} versions go. Confirm again.`);
    expect((await versionIds(dev.core!)).length).toBe(coreBefore.length + 1);
    await page.click(`button:text('Purge ${expected + 1} versions')`);
    expect(await page.textContent("h1")).toBe("Purged");
    expect(await page.textContent("#purge-counts li")).toBe(`${expected + 1} configuration versions of 2 devices`);
    expect(await versionIds(dev.edge!)).toEqual([Math.max(...edgeBefore)]);
    expect((await versionIds(dev.core!)).length).toBe(1);
    await api("/configs/retention-policy", "PUT", {});
  });

  it("exports the latest versions the filters select as the API's archive", async () => {
    const { page, base } = b;
    await page.goto(`${base}/configs/retention`);
    await page.fill("#x-device_tags", "core");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click("button:text('Export the configurations')"),
    ]);
    expect(download.suggestedFilename()).toMatch(/^configs-\d{4}-\d{2}-\d{2}\.tar\.gz$/);
    const names = execFileSync("tar", ["-tzf", (await download.path())!])
      .toString()
      .trim()
      .split("\n");
    expect(names).toEqual(["core-1/show-running-config.txt"]);
  });

  it("keeps a scoped user to their devices: no policy form, their purge only, others' versions not found", async () => {
    const { page, base } = b;
    const [coreOld] = await store(dev.core!, 2, 40);
    await store(dev.edge!, 2, 40);
    await api("/configs/retention-policy", "PUT", { keep_versions: 1 });
    const coreBefore = await versionIds(dev.core!);
    const edgeGo = (await versionIds(dev.edge!)).length - 1;
    await b.loginAs("edgy");
    try {
      expect((await page.goto(`${base}/configs/${coreOld}`))!.status()).toBe(404);
      expect((await page.goto(`${base}/configs/${coreOld}/delete`))!.status()).toBe(404);
      expect(await postStatus(`/configs/${coreOld}/delete`, `_csrf=${await b.csrf()}`)).toBe(404);
      await page.goto(`${base}/configs/retention`);
      expect(await page.locator("#r-keep_days").count()).toBe(0);
      expect(await page.textContent("#retention-policy")).toContain(
        "The retention policy applies to every device; changing it needs a role that sees all devices.",
      );
      // Posted anyway: the API's refusal, word for word.
      const refused = await page.evaluate(
        async (csrf) => {
          const res = await fetch("/configs/retention", {
            method: "POST",
            body: `_csrf=${csrf}&keep_days=1`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          });
          return [res.status, await res.text()] as const;
        },
        (await b.csrf())!,
      );
      expect(refused[0]).toBe(403);
      expect(refused[1]).toContain(
        "The retention policy applies to every device; changing it needs a role that sees all devices",
      );
      await page.goto(`${base}/configs/retention`);
      expect(edgeGo).toBeGreaterThan(1);
      await page.click("#purge a:text('Purge…')");
      expect(await page.textContent("#purge-counts li")).toBe(`${edgeGo} configuration versions of 1 device`);
      const rows = await page.locator("main table tbody tr").allTextContents();
      expect(rows).toHaveLength(edgeGo);
      expect(rows.every((r) => r.includes(HOSTILE))).toBe(true);
      await page.click(`button:text('Purge ${edgeGo} versions')`);
      expect(await page.textContent("h1")).toBe("Purged");
      expect((await versionIds(dev.edge!)).length).toBe(1);
      expect(await versionIds(dev.core!)).toEqual(coreBefore);
      // The export holds their devices only.
      await page.goto(`${base}/configs/retention`);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.click("button:text('Export the configurations')"),
      ]);
      const names = execFileSync("tar", ["-tzf", (await download.path())!])
        .toString()
        .trim()
        .split("\n");
      expect(names.every((n) => !n.startsWith("core-1/"))).toBe(true);
      expect(names).toHaveLength(1);
    } finally {
      await api("/configs/retention-policy", "PUT", {});
      await b.loginAs("admin1");
    }
  });

  it("shows a role without configs.write no delete, policy or purge control", async () => {
    const { page, base } = b;
    const [v] = await versionIds(dev.core!);
    await b.loginAs("viewer1");
    try {
      await page.goto(`${base}/configs/${v}`);
      expect(await page.locator("h1").textContent()).toContain("core-1");
      expect(await page.locator(`a[href="/configs/${v}/delete"]`).count()).toBe(0);
      await page.goto(`${base}/configs/retention`);
      expect(await page.locator("#r-keep_days").count()).toBe(0);
      expect(await page.locator("#purge").count()).toBe(0);
      expect(await page.locator("#export button").count()).toBe(1);
      expect((await page.goto(`${base}/configs/purge`))!.status()).toBe(403);
      expect((await page.goto(`${base}/configs/${v}/delete`))!.status()).toBe(403);
    } finally {
      await b.loginAs("admin1");
    }
  });
});
