import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { categories, commands, deviceProfiles, type tags, vendors } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Command groups and their commands, vendors, tags and device profiles from the browser, through the API's rules. */
const unavailable = chromiumMissing("test/web/inventory.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("inventory pages in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const idIn = async (table: typeof vendors | typeof categories | typeof tags | typeof deviceProfiles, name: string) =>
    (await t.db.select({ id: table.id }).from(table).where(eq(table.name, name)))[0]?.id;
  const commandId = async (text: string) =>
    (await t.db.select({ id: commands.id }).from(commands).where(eq(commands.command, text)))[0]?.id;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, [
      "vendors.read",
      "vendors.write",
      "categories.read",
      "categories.write",
      "commands.read",
      "commands.write",
      "tags.read",
      "devices.read",
    ]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a command group, then a command in it from the group's Commands link", async () => {
    const { page, base } = b;
    await page.goto(`${base}/categories`);
    await page.click("text=Add a command group");
    await page.fill("#categories-name", "Edge routers");
    await page.fill("#categories-description", "Routers at the edge");
    await page.click("button:text('Add command group')");
    await page.waitForURL(`${base}/categories?done=created`);
    const group = (await idIn(categories, "Edge routers"))!;
    expect(group).toBeGreaterThan(0);
    await page
      .locator("#categories-list tr", { hasText: "Edge routers" })
      .locator("a", { hasText: "Commands" })
      .click();
    await page.click("text=Add a command");
    // The group the list was filtered by is ticked already.
    expect(await page.isChecked(`input[name=category_ids][value="${group}"]`)).toBe(true);
    await page.fill("#commands-command", "show running-config all");
    await page.click("button:text('Add command')");
    await page.waitForURL(/\/commands\?done=created/);
    await b.shoot("commands");
    await page.goto(`${base}/categories`);
    expect(await page.textContent("#categories-list")).toContain("show running-config all");
    await b.shoot("categories");
    const made = await t.call(`/api/v1/commands/${await commandId("show running-config all")}`, { token });
    expect(made.body.data.category_ids).toEqual([group]);
  });

  it("shows the API's problems next to their fields and keeps what was typed", async () => {
    const { page, base } = b;
    await page.goto(`${base}/commands/new`);
    await page.fill("#commands-command", "show version");
    await page.click("button:text('Add command')");
    expect(await page.textContent("#commands-category_ids-error")).toContain("at least 1 item");
    expect(await page.inputValue("#commands-command")).toBe("show version");
    expect(await commandId("show version")).toBeUndefined();
    await page.goto(`${base}/categories/new`);
    await page.fill("#categories-name", "EDGE ROUTERS");
    await page.click("button:text('Add command group')");
    expect(await page.textContent("#categories-name-error")).toBe("'EDGE ROUTERS' is already taken");
  });

  it("edits a command and deletes it after a confirmation", async () => {
    const { page, base } = b;
    const id = (await commandId("show running-config all"))!;
    await page.goto(`${base}/commands/${id}/edit`);
    expect(await page.inputValue("#commands-command")).toBe("show running-config all");
    await page.fill("#commands-description", "everything");
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect((await t.call(`/api/v1/commands/${id}`, { token })).body.data.description).toBe("everything");
    await page.goto(`${base}/commands/${id}/delete`);
    expect(await page.textContent("h1")).toContain("show running-config all");
    await page.click("button:text('Delete the command')");
    await page.waitForURL(/done=deleted/);
    expect(await commandId("show running-config all")).toBeUndefined();
  });

  it("adds a vendor, a tag and a device profile with lists to choose from", async () => {
    const { page, base } = b;
    await page.goto(`${base}/vendors/new`);
    await page.fill("#vendors-name", "Acmenet");
    await page.click("button:text('Add vendor')");
    await page.waitForURL(/done=created/);
    await page.goto(`${base}/tags/new`);
    await page.fill("#tags-name", "branch");
    await page.fill("#tags-color", "#1f6feb");
    await page.click("button:text('Add tag')");
    await page.waitForURL(/done=created/);
    await b.shoot("tags");
    expect(await page.textContent("#tags-list")).toContain("#1f6feb");
    await page.goto(`${base}/device-profiles/new`);
    await page.fill("#device-profiles-name", "Branch router");
    await page.selectOption("#device-profiles-vendor_id", { label: "Acmenet" });
    await page.fill("#device-profiles-port", "70000");
    await page.fill("#device-profiles-tags", "branch, wan");
    await page.click("button:text('Add device profile')");
    expect(await page.textContent("#device-profiles-port-error")).toBe("must be at most 65535");
    expect(await page.inputValue("#device-profiles-tags")).toBe("branch, wan");
    await page.fill("#device-profiles-port", "830");
    await page.click("button:text('Add device profile')");
    await page.waitForURL(/done=created/);
    await b.shoot("device-profiles");
    const id = (await idIn(deviceProfiles, "Branch router"))!;
    expect((await t.call(`/api/v1/device-profiles/${id}`, { token })).body.data).toMatchObject({
      vendor: "Acmenet",
      port: 830,
      tags: ["branch", "wan"],
    });
  });

  it("refuses a forged form, and shows a hostile name as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/vendors`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/vendors/new", {
            method: "POST",
            body: "_csrf=nope&name=forged",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await idIn(vendors, "forged")).toBeUndefined();
    await page.goto(`${base}/vendors/new`);
    await page.fill("#vendors-name", HOSTILE);
    await page.click("button:text('Add vendor')");
    await page.waitForURL(/done=created/);
    expect(await page.locator("#vendors-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
    await b.shoot("vendors");
  });

  it("refuses to delete a vendor or command group that devices use, saying so in words", async () => {
    const { page, base } = b;
    const group = (await idIn(categories, "Edge routers"))!;
    const made = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: { device_name: "core-1", device_ip: "192.0.2.1", device_vendor: "Acmenet", device_category_id: group },
    });
    expect(made.status).toBe(201);
    const acme = (await idIn(vendors, "Acmenet"))!;
    await page.goto(`${base}/vendors/${acme}/delete`);
    await page.click("button:text('Delete the vendor')");
    expect(await page.textContent(".alert.error")).toContain("is used by 1 device");
    expect(await idIn(vendors, "Acmenet")).toBe(acme);
    await page.goto(`${base}/categories/${group}/delete`);
    await page.click("button:text('Delete the command group')");
    expect(await page.textContent(".alert.error")).toContain("is used by 1 device");
    expect(await idIn(categories, "Edge routers")).toBe(group);
  });

  it("does not let a scoped role change a vendor that devices outside its scope use, nor count them", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    await page.goto(`${base}/vendors`);
    const row = page.locator("#vendors-list tr", { hasText: "Acmenet" });
    expect(await row.textContent()).toContain("0 devices");
    const acme = (await idIn(vendors, "Acmenet"))!;
    await page.goto(`${base}/vendors/${acme}/edit`);
    await page.fill("#vendors-name", "Taken over");
    await page.click("text=Save changes");
    expect(await page.textContent("h1")).toBe("Refused");
    expect(await idIn(vendors, "Acmenet")).toBe(acme);
    // The role may not write tags: the list has no way to.
    await page.goto(`${base}/tags`);
    expect(await page.locator("text=Add a tag").count()).toBe(0);
    expect((await page.goto(`${base}/tags/new`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });

  it("shows a viewer the lists without any way to change them", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    for (const [path, list] of [
      ["/vendors", "#vendors-list"],
      ["/categories", "#categories-list"],
      ["/tags", "#tags-list"],
      ["/device-profiles", "#device-profiles-list"],
    ]) {
      await page.goto(`${base}${path}`);
      expect(await page.locator(list!).count()).toBe(1);
      expect(await page.locator("a", { hasText: /^Add a / }).count()).toBe(0);
      expect(await page.locator(`${list} a`, { hasText: "Edit" }).count()).toBe(0);
      expect((await page.goto(`${base}${path}/new`))!.status()).toBe(403);
    }
    await b.loginAs("admin1");
  });
});
