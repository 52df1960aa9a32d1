import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vendors } from "../../src/db/schema/index.ts";
import { createDevice } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/**
 * Bulk delete of templates, command groups, commands, vendors, tags and device profiles from their lists: tick,
 * confirm (each record with what deleting it does or why the API refuses it), then the API's bulk delete.
 */
const unavailable = chromiumMissing("test/web/inventory-bulk.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("bulk delete on the inventory lists in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const vendorId = async (name: string) =>
    (await t.db.select({ id: vendors.id }).from(vendors).where(eq(vendors.name, name)))[0]?.id;
  const make = async (path: string, body: Record<string, unknown>) => {
    const res = await t.call(`/api/v1${path}`, { method: "POST", token, body });
    if (res.status !== 201) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
    return res.body.data.id as number;
  };
  const exists = async (path: string, id: number) => (await t.call(`/api/v1${path}/${id}`, { token })).status === 200;
  const tick = (list: string, name: string) =>
    b.page.locator(`${list} tr`, { hasText: name }).locator("input[name=ids]").check();

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["vendors.read", "vendors.write", "templates.read", "devices.read"]);
    for (const name of ["Unused One", "Unused Two", "Core Vendor", "Edge Vendor"]) await make("/vendors", { name });
    await createDevice(t, token, { device_name: "core-1", device_vendor: "Core Vendor", device_tags: ["core"] });
    await createDevice(t, token, { device_name: "edge-1", device_vendor: "Edge Vendor", device_tags: ["edge"] });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("confirms each ticked vendor, says why one in use cannot go, and deletes the others", async () => {
    const { page, base } = b;
    await page.goto(`${base}/vendors?per_page=500`);
    for (const name of ["Unused One", "Unused Two", "Core Vendor"]) await tick("#vendors-list", name);
    await page.click("button:text('Delete selected')");
    expect(await page.textContent("h1")).toBe("Delete 3 vendors?");
    const core = page.locator("#bulk-delete-list li", { hasText: "Core Vendor" });
    expect(await core.locator(".field-error").textContent()).toContain("is used by 1 device");
    expect(await core.locator("input").count()).toBe(0);
    expect(await page.locator("#bulk-delete-list input:checked").count()).toBe(2);
    await b.shoot("vendors-bulk-delete");
    await page.click("button:text('Delete the ticked vendors')");
    await page.waitForURL(/done=bulk-deleted/);
    expect(await page.textContent(".alert.success")).toBe("Deleted 2 vendors.");
    expect(await vendorId("Unused One")).toBeUndefined();
    expect(await vendorId("Unused Two")).toBeUndefined();
    expect(await vendorId("Core Vendor")).toBeGreaterThan(0);
  });

  it("says next to the button that nothing was ticked", async () => {
    const { page, base } = b;
    await page.goto(`${base}/vendors?per_page=500`);
    await page.click("button:text('Delete selected')");
    await page.waitForURL(/selection=empty/);
    expect(await page.textContent("#ids-error")).toBe("Tick at least one vendor to delete.");
    await b.shoot("vendors-bulk-empty");
  });

  it("deletes nothing when one of the records posted is refused (all or nothing, as the API)", async () => {
    const { page, base } = b;
    const free = await make("/vendors", { name: "Free Vendor" });
    const core = (await vendorId("Core Vendor"))!;
    await page.goto(`${base}/vendors?per_page=500`);
    const csrf = (await b.csrf())!;
    await page.evaluate(
      async ({ csrf, free, core }) => {
        const form = document.createElement("form");
        form.method = "post";
        form.action = "/vendors/bulk-delete";
        for (const [k, v] of [
          ["_csrf", csrf],
          ["step", "delete"],
          ["ids", String(free)],
          ["ids", String(core)],
        ]) {
          const input = document.createElement("input");
          input.type = "hidden";
          input.name = k!;
          input.value = v!;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      { csrf, free, core },
    );
    await page.waitForSelector(".alert.error");
    expect(await page.textContent(".alert.error")).toContain("Nothing was deleted");
    expect(await exists("/vendors", free)).toBe(true);
    expect(await exists("/vendors", core)).toBe(true);
  });

  it("refuses a forged form, and shows a hostile name as text on the confirmation", async () => {
    const { page, base } = b;
    const hostile = await make("/vendors", { name: HOSTILE });
    await page.goto(`${base}/vendors?per_page=500`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch("/vendors/bulk-delete", {
            method: "POST",
            body: `_csrf=nope&step=delete&ids=${id}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      hostile,
    );
    expect(status).toBe(403);
    expect(await exists("/vendors", hostile)).toBe(true);
    await page.locator(`#vendors-list input[name=ids][value="${hostile}"]`).check();
    await page.click("button:text('Delete selected')");
    expect(await page.locator("#bulk-delete-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
    await page.click("button:text('Delete the ticked vendors')");
    await page.waitForURL(/done=bulk-deleted/);
    expect(await exists("/vendors", hostile)).toBe(false);
  });

  it("deletes a selection of each inventory kind", async () => {
    const { page, base } = b;
    const group = await make("/categories", { name: "Bulk group" });
    const made: [string, string, string, number][] = [
      ["/categories", "#categories-list", "Bulk group", group],
      [
        "/commands",
        "#commands-list",
        "show bulk",
        await make("/commands", { command: "show bulk", category_ids: [group] }),
      ],
      ["/tags", "#tags-list", "bulk-tag", await make("/tags", { name: "bulk-tag" })],
      [
        "/device-profiles",
        "#device-profiles-list",
        "Bulk profile",
        await make("/device-profiles", { name: "Bulk profile" }),
      ],
    ];
    const builtin = (await t.call("/api/v1/templates?per_page=1", { token })).body.data[0];
    const copy = await t.call(`/api/v1/templates/${builtin.id}/copy`, {
      method: "POST",
      token,
      body: { name: "Bulk template" },
    });
    expect(copy.status).toBe(201);
    made.unshift(["/templates", "#template-list", "Bulk template", copy.body.data.id]);
    // The command first, so its group holds none when it goes.
    for (const [path, list, name, id] of [made[2]!, made[0]!, made[1]!, made[3]!, made[4]!]) {
      await page.goto(`${base}${path}`);
      await tick(list, name);
      await page.click("button:text('Delete selected')");
      expect(await page.textContent("#bulk-delete-list")).toContain(name);
      await page.locator("button", { hasText: /^Delete the ticked / }).click();
      await page.waitForURL(/done=bulk-deleted&n=1/);
      expect(await exists(path, id), path).toBe(false);
    }
    await page.goto(`${base}/templates`);
    // A built-in template is read-only: no tick box.
    expect(await page.locator(`#template-list tr[data-id="${builtin.id}"] input[name=ids]`).count()).toBe(0);
    await b.shoot("templates-bulk");
  });

  it("lets a scoped user delete only what reaches no device outside their scope, without naming those devices", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    const free = await make("/vendors", { name: "Scoped Free" });
    await page.goto(`${base}/vendors?per_page=500`);
    for (const name of ["Core Vendor", "Scoped Free"]) await tick("#vendors-list", name);
    await page.click("button:text('Delete selected')");
    const core = page.locator("#bulk-delete-list li", { hasText: "Core Vendor" });
    expect(await core.locator(".field-error").count()).toBe(1);
    expect(await page.textContent("main")).not.toContain("core-1");
    await page.click("button:text('Delete the ticked vendors')");
    await page.waitForURL(/done=bulk-deleted&n=1/);
    expect(await exists("/vendors", free)).toBe(false);
    expect(await vendorId("Core Vendor")).toBeGreaterThan(0);
    // The role reads templates but may not write them: no tick boxes, no button, and the address refuses.
    await page.goto(`${base}/templates`);
    expect(await page.locator("#template-list input[name=ids]").count()).toBe(0);
    expect(await page.locator("button:text('Delete selected')").count()).toBe(0);
    await b.loginAs("admin1");
  });

  it("shows a viewer the lists without tick boxes, and refuses the address", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    for (const path of ["/vendors", "/categories", "/commands", "/tags", "/device-profiles", "/templates"]) {
      await page.goto(`${base}${path}`);
      expect(await page.locator("input[name=ids]").count(), path).toBe(0);
      expect(await page.locator("button:text('Delete selected')").count(), path).toBe(0);
    }
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/vendors/bulk-delete", {
            method: "POST",
            body: "_csrf=x&ids=1",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    await b.loginAs("admin1");
  });
});
