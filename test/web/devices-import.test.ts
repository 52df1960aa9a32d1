import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Importing devices from the browser: a pasted address list or CSV text, checked first, through the import API's planner. */
const unavailable = chromiumMissing("test/web/devices-import.test.ts");
const HOSTILE = "<script>alert(1)</script>";

describe.skipIf(unavailable)("device import in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let cred = 0;
  const byName = async (name: string) => {
    const [row] = await t.db.select({ id: devices.id }).from(devices).where(eq(devices.name, name));
    return row ? (await t.call(`/api/v1/devices/${row.id}`, { token })).body.data : undefined;
  };

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    cred = (
      await t.call("/api/v1/device-credentials", {
        method: "POST",
        token,
        body: { cred_name: "lab", cred_username: "backup" },
      })
    ).body.data.id;
    b = await startBrowserWithCast(t, ["devices.read", "devices.write", "system.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("checks a pasted address list without changing anything, then imports it with the choices made once", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices`);
    await page.click("text=Import devices");
    await page.fill("#i-list", "192.0.2.31\nsw-acc-32 192.0.2.32\n");
    await page.selectOption("#i-device_vendor", "Cisco");
    await page.selectOption("#i-device_template_id", { label: "cisco-ios" });
    await page.selectOption("#i-device_cred_id", String(cred));
    await page.fill("#i-device_tags", "access|ams");
    await page.locator("form:has(#i-list) button", { hasText: "Check" }).click();
    expect(await page.textContent("#import-counts")).toBe("2 to create, 0 to update, 0 rejected");
    expect(await byName("sw-acc-32")).toBeUndefined();
    await b.shoot("devices-import");
    await page.locator("form:has(#i-list) button", { hasText: "Import" }).click();
    expect(await page.textContent("#import-counts")).toBe("2 created, 0 updated, 0 rejected");
    expect(await byName("sw-acc-32")).toMatchObject({
      device_ip: "192.0.2.32",
      device_vendor: "Cisco",
      device_cred_id: cred,
      device_tags: ["access", "ams"],
    });
    expect(await byName("192.0.2.31")).toMatchObject({ device_ip: "192.0.2.31", device_cred_id: cred });
  });

  it("imports the good rows of a CSV text and says why each bad one was rejected, names shown as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/import`);
    await page.fill(
      "#i-csv",
      `device_name,device_ip,device_vendor\n"${HOSTILE.replace(/"/g, '""')}",192.0.2.40,Cisco\nbad,192.0.2.41,Cisco\n`,
    );
    await page.locator("form:has(#i-csv) button", { hasText: "Import" }).click();
    expect(await page.textContent("#import-counts")).toBe("1 created, 0 updated, 1 rejected");
    const bad = page.locator("#import-report tr", { hasText: "bad" });
    expect(await bad.textContent()).toContain("must be at least 5 characters");
    expect(await page.locator("#import-report td", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main script").count()).toBe(0);
    expect(await byName(HOSTILE)).toBeDefined();
  });

  it("refuses a forged form, a scoped user's rows outside the scope, and a viewer", async () => {
    const { page, base } = b;
    const forged = await page.evaluate(
      async () =>
        (
          await fetch("/devices/import", {
            method: "POST",
            body: "_csrf=x&list=192.0.2.77&device_vendor=Cisco",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(forged).toBe(403);
    expect(await byName("192.0.2.77")).toBeUndefined();

    await b.loginAs("edgy");
    await page.goto(`${base}/devices/import`);
    await page.fill("#i-list", "core-ams-50 192.0.2.50\n");
    await page.fill("#i-device_vendor", "Cisco");
    await page.fill("#i-device_tags", "core");
    await page.locator("form:has(#i-list) button", { hasText: "Import" }).click();
    expect(await page.textContent("#import-counts")).toBe("0 created, 0 updated, 1 rejected");
    expect(await page.textContent("#import-report")).toContain("outside your scope");
    expect(await byName("core-ams-50")).toBeUndefined();

    await b.loginAs("viewer1");
    await page.goto(`${base}/devices`);
    expect(await page.locator("text=Import devices").count()).toBe(0);
    expect((await page.goto(`${base}/devices/import`))!.status()).toBe(403);
  });
});
