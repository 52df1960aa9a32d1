import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** The snippet editor's templates: the API's `template_ids`, chosen from the templates the role may list. */
const unavailable = chromiumMissing("test/web/snippet-templates.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("the templates a snippet is written for, in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  let first: { id: number; name: string };
  let second: { id: number; name: string };
  let hostile: number;
  const api = (path: string, method = "GET", body?: unknown) => t.call(`/api/v1${path}`, { method, token, body });
  const snippetNamed = async (name: string) =>
    (await api(`/snippets?search=${encodeURIComponent(name)}`)).body.data.find(
      (s: { name: string }) => s.name === name,
    );

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    // The scoped role may write snippets but not list templates.
    b = await startBrowserWithCast(t, ["snippets.read", "snippets.write", "devices.read"]);
    [first, second] = (await api("/templates?per_page=2&sort=name")).body.data;
    hostile = (await api(`/templates/${first.id}/copy`, "POST", { name: HOSTILE })).body.data.id;
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("saves the chosen templates, shows them chosen when editing, and changes them", async () => {
    const { page, base } = b;
    await page.goto(`${base}/snippets/new`);
    await page.fill("#s-name", "NTP for two families");
    await page.fill("#s-content", "ntp server 192.0.2.5");
    await page.selectOption("#s-template_ids", [String(first.id), String(second.id)]);
    await b.shoot("snippet-templates");
    await page.click("button:text('Add snippet')");
    await page.waitForURL(/done=created/);
    const made = await snippetNamed("NTP for two families");
    expect([...made.template_ids].sort()).toEqual([first.id, second.id].sort());
    await page.goto(`${base}/snippets/${made.id}/edit`);
    const chosen = await page.$$eval("#s-template_ids option:checked", (os) =>
      os.map((o) => (o as HTMLOptionElement).value),
    );
    expect(chosen.sort()).toEqual([String(first.id), String(second.id)].sort());
    await page.selectOption("#s-template_ids", [String(second.id)]);
    await page.click("button:text('Save changes')");
    await page.waitForURL(/done=saved/);
    expect((await api(`/snippets/${made.id}`)).body.data.template_ids).toEqual([second.id]);
  });

  it("shows the API's problem with a template that no longer exists next to the field", async () => {
    const { page, base } = b;
    await page.goto(`${base}/snippets/new`);
    await page.fill("#s-name", "Gone template");
    await page.fill("#s-content", "ntp server 192.0.2.5");
    // A template deleted after the form was opened.
    await page.evaluate(() => {
      const option = new Option("deleted meanwhile", "99999", true, true);
      document.querySelector("#s-template_ids")!.append(option);
    });
    await page.click("button:text('Add snippet')");
    expect(await page.textContent("#s-template_ids-error")).toContain("99999 is not an existing connection template");
    expect(await page.inputValue("#s-name")).toBe("Gone template");
    expect(await snippetNamed("Gone template")).toBeUndefined();
  });

  it("refuses a forged form, and shows a hostile template name as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/snippets/new`);
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch("/snippets/new", {
            method: "POST",
            body: `_csrf=nope&name=forged&content=x&template_ids=${id}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      first.id,
    );
    expect(status).toBe(403);
    expect(await snippetNamed("forged")).toBeUndefined();
    expect(await page.locator(`#s-template_ids option[value="${hostile}"]`).textContent()).toBe(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("leaves the templates as they are for a role that may not list templates", async () => {
    const { page, base } = b;
    const made = await snippetNamed("NTP for two families");
    await b.loginAs("edgy");
    await page.goto(`${base}/snippets/${made.id}/edit`);
    expect(await page.locator("#s-template_ids").count()).toBe(0);
    await page.fill("#s-description", "edited by edgy");
    await page.click("button:text('Save changes')");
    await page.waitForURL(/done=saved/);
    const after = (await api(`/snippets/${made.id}`)).body.data;
    expect(after).toMatchObject({ description: "edited by edgy", template_ids: [second.id] });
    await b.loginAs("admin1");
  });

  it("gives a viewer no editor", async () => {
    const { page, base } = b;
    const made = await snippetNamed("NTP for two families");
    await b.loginAs("viewer1");
    expect((await page.goto(`${base}/snippets/${made.id}/edit`))!.status()).toBe(403);
    expect((await page.goto(`${base}/snippets/new`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
