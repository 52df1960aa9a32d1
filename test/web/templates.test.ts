import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { templates } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Templates from the browser: view, copy, edit with the save-time problems on their lines, render preview. */
const unavailable = chromiumMissing("test/web/templates.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const CONFIG = [
  "Building configuration...",
  "hostname r1",
  "enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",
  "interface Vlan10",
  " standby 1 authentication Hsrp-Text-9",
].join("\n");

describe.skipIf(unavailable)("templates in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const row = async (name: string) => (await t.db.select().from(templates).where(eq(templates.name, name)))[0];

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["templates.read", "templates.write", "devices.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("shows a built-in template read-only and copies it into one the user may change", async () => {
    const { page, base } = b;
    const ios = (await row("cisco-ios"))!;
    await page.goto(`${base}/templates`);
    await b.shoot("templates");
    const listed = page.locator("#template-list tr", { hasText: "cisco-ios" }).first();
    expect(await listed.textContent()).toContain("built-in");
    expect(await listed.locator("a", { hasText: "Edit" }).count()).toBe(0);
    await page.goto(`${base}/templates/${ios.id}`);
    expect(await page.locator("a", { hasText: /^Edit$/ }).count()).toBe(0);
    // The YAML is shown line by line, numbered.
    expect(await page.locator("#template-code .line").count()).toBe(ios.code.replace(/\n$/, "").split("\n").length);
    await page.click("button:text('Copy the template')");
    await page.waitForURL(/done=copied/);
    expect(await page.textContent("h1")).toContain("cisco-ios (copy)");
    const copy = (await row("cisco-ios (copy)"))!;
    expect(copy.code).toBe(ios.code);
    expect(copy.builtinKey).toBeNull();
    await page.goto(`${base}/templates/${ios.id}`);
    await page.fill("#copy-name", "CISCO-IOS (COPY)");
    await page.click("button:text('Copy the template')");
    expect(await page.textContent("#copy-name-error")).toBe("'CISCO-IOS (COPY)' is already taken");
  });

  it("shows a save-time problem next to the YAML field and on the line it names", async () => {
    const { page, base } = b;
    const copy = (await row("cisco-ios (copy)"))!;
    await page.goto(`${base}/templates/${copy.id}/edit`);
    const broken = copy.code.replace(/^prompt: .*$/m, "prompt: '(unclosed'");
    const promptLine = broken.split("\n").findIndex((l) => l.startsWith("prompt:")) + 1;
    await page.fill("#t-code", broken);
    await page.click("text=Save changes");
    expect(await page.textContent("#t-code-error")).toContain(`line ${promptLine}`);
    expect(await page.getAttribute(`#checked-L${promptLine}`, "class")).toContain("hit");
    expect(await page.textContent("#code-problems")).toContain("not a valid regular expression");
    expect(await page.inputValue("#t-code")).toBe(broken);
    await b.shoot("template-edit-problem");
    expect((await row("cisco-ios (copy)"))!.code).toBe(copy.code);
    await page.fill("#t-code", copy.code.replace(/^description: .*$/m, "description: Lab IOS"));
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect((await row("cisco-ios (copy)"))!.code).toContain("description: Lab IOS");
  });

  it("previews what a backup would store of a pasted configuration, the masked spans marked", async () => {
    const { page, base } = b;
    const ios = (await row("cisco-ios"))!;
    const api = (await t.call(`/api/v1/templates/${ios.id}/render`, { method: "POST", token, body: { text: CONFIG } }))
      .body.data;
    await page.goto(`${base}/templates/${ios.id}`);
    await page.fill("#render-text", CONFIG);
    await page.click("text=Show what would be stored");
    const result = await page.textContent("#render-result pre");
    expect(result).not.toContain("Hsrp-Text-9");
    expect(result).not.toContain("Building configuration");
    expect(await page.locator("#render-result mark").count()).toBe(api.masks.length);
    expect(await page.locator("#render-masks tbody tr").count()).toBe(api.masks.length);
    expect(await page.textContent("#render-result")).toContain(`${api.lines_dropped} line dropped`);
    await b.shoot("template-render");
  });

  it("refuses a forged form, and shows a hostile name as text", async () => {
    const { page, base } = b;
    const ios = (await row("cisco-ios"))!;
    await page.goto(`${base}/templates`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch(`/templates/${id}/copy`, {
            method: "POST",
            body: "_csrf=nope&name=forged",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      ios.id,
    );
    expect(status).toBe(403);
    expect(await row("forged")).toBeUndefined();
    await page.goto(`${base}/templates/new`);
    await page.fill("#t-name", HOSTILE);
    await page.click("button:text('Add template')");
    await page.waitForURL(/done=created/);
    expect(await page.textContent("h1")).toContain(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("refuses to delete a template that devices use, and lets a scoped role change none that reaches beyond it", async () => {
    const { page, base } = b;
    const copy = (await row("cisco-ios (copy)"))!;
    const made = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: { device_name: "core-1", device_ip: "192.0.2.1", device_vendor: "Cisco", device_template_id: copy.id },
    });
    expect(made.status).toBe(201);
    await page.goto(`${base}/templates/${copy.id}/delete`);
    await page.click("button:text('Delete the template')");
    expect(await page.textContent(".alert.error")).toContain("is used by 1 device");
    expect(await row("cisco-ios (copy)")).toBeDefined();
    await b.loginAs("edgy");
    await page.goto(`${base}/templates/${copy.id}/edit`);
    await page.fill("#t-description", "taken over");
    await page.click("text=Save changes");
    expect(await page.textContent("h1")).toBe("Refused");
    expect((await row("cisco-ios (copy)"))!.description).not.toBe("taken over");
    await b.loginAs("admin1");
  });

  it("lets a viewer read and preview, with no way to change a template", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    const copy = (await row("cisco-ios (copy)"))!;
    await page.goto(`${base}/templates`);
    expect(await page.locator("text=Add a template").count()).toBe(0);
    expect(await page.locator("#template-list a", { hasText: "Edit" }).count()).toBe(0);
    await page.goto(`${base}/templates/${copy.id}`);
    expect(await page.locator("button:text('Copy the template')").count()).toBe(0);
    await page.fill("#render-text", CONFIG);
    await page.click("text=Show what would be stored");
    expect(await page.locator("#render-result mark").count()).toBeGreaterThan(0);
    expect((await page.goto(`${base}/templates/${copy.id}/edit`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
