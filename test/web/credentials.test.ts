import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials } from "../../src/db/schema/index.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Credential sets from the browser: secrets go in and never come out; the API's rules and refusals apply. */
const unavailable = chromiumMissing("test/web/credentials.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;
const SECRET = "pw-never-shown-7731";

describe.skipIf(unavailable)("credential sets in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const api = async (id: number) => (await t.call(`/api/v1/device-credentials/${id}`, { token })).body.data;
  const idOf = async (name: string) =>
    (await t.db.select({ id: credentials.id }).from(credentials).where(eq(credentials.name, name)))[0]?.id;

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["credentials.read", "credentials.write", "devices.read", "system.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a set: the list says which secrets are stored and never shows one", async () => {
    const { page, base } = b;
    await page.goto(`${base}/credentials`);
    await page.click("text=Add a credential set");
    await b.shoot("credential-new");
    await page.fill("#c-cred_name", "core-routers");
    await page.fill("#c-cred_username", "backup");
    await page.fill("#c-cred_password", SECRET);
    await page.fill("#c-snmp_community", "n0t-public-91");
    await page.click("text=Add credential set");
    await page.waitForURL(`${base}/credentials?done=created`);
    const row = page.locator("#credential-list tr", { hasText: "core-routers" });
    expect(await row.textContent()).toContain("has password");
    expect(await row.textContent()).toContain("has SNMP community");
    expect(await row.textContent()).not.toContain("has SSH key");
    expect(await page.content()).not.toContain(SECRET);
    await b.shoot("credentials");
    expect(await api((await idOf("core-routers"))!)).toMatchObject({
      cred_username: "backup",
      has_password: true,
      has_snmp_community: true,
    });
  });

  it("shows the API's problems next to their fields", async () => {
    const { page, base } = b;
    await page.goto(`${base}/credentials/new`);
    await page.fill("#c-cred_name", "CORE-ROUTERS");
    await page.fill("#c-snmp_v3_auth_password", "short");
    await page.click("text=Add credential set");
    expect(await page.textContent("#c-cred_name-error")).toBe("'CORE-ROUTERS' is already taken");
    expect(await page.textContent("#c-snmp_v3_auth_password-error")).toContain("must be at least 8 characters");
    expect(await page.inputValue("#c-cred_name")).toBe("CORE-ROUTERS");
    expect(await page.inputValue("#c-snmp_v3_auth_password")).toBe("");
    await page.fill("#c-cred_name", "keyed");
    await page.fill("#c-ssh_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO4 me@host");
    await page.click("text=Add credential set");
    expect(await page.textContent("#c-ssh_key-error")).toMatch(/public key|not a private key/);
    expect(await idOf("keyed")).toBeUndefined();
  });

  it("keeps a secret left empty on edit, clears one when asked", async () => {
    const { page, base } = b;
    const id = (await idOf("core-routers"))!;
    await page.goto(`${base}/credentials/${id}/edit`);
    expect(await page.textContent("#c-cred_password ~ .hint, .field:has(#c-cred_password) .hint")).toContain(
      "Stored (never shown)",
    );
    await page.fill("#c-cred_username", "backup2");
    await page.check("input[name=clear_snmp_community]");
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect(await api(id)).toMatchObject({ cred_username: "backup2", has_password: true, has_snmp_community: false });
  });

  it("refuses a forged form, and shows a hostile name as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/credentials`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/credentials/new", {
            method: "POST",
            body: "_csrf=nope&cred_name=forged",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await idOf("forged")).toBeUndefined();
    await page.goto(`${base}/credentials/new`);
    await page.fill("#c-cred_name", HOSTILE);
    await page.click("text=Add credential set");
    await page.waitForURL(/done=created/);
    expect(await page.locator("#credential-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("refuses to delete a set a device uses (saying so on the confirmation page), deletes an unused one", async () => {
    const { page, base } = b;
    const used = (await idOf("core-routers"))!;
    const made = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: {
        device_name: "core-ams-1",
        device_ip: "192.0.2.1",
        device_vendor: "Cisco",
        device_cred_id: used,
        device_tags: ["core"],
      },
    });
    expect(made.status).toBe(201);
    await page.goto(`${base}/credentials/${used}/delete`);
    await page.click("button:text('Delete the credential set')");
    expect(await page.textContent(".alert.error")).toContain("is used by 1 device");
    expect(await idOf("core-routers")).toBe(used);
    const hostile = (await idOf(HOSTILE))!;
    await page.goto(`${base}/credentials`);
    await page.locator("#credential-list tr", { hasText: HOSTILE }).locator("a", { hasText: "Delete" }).click();
    await page.click("button:text('Delete the credential set')");
    await page.waitForURL(/done=deleted/);
    expect(await idOf(HOSTILE)).toBeUndefined();
    expect(hostile).toBeGreaterThan(0);
  });

  it("does not let a scoped role change a set that devices outside its scope use", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    const used = (await idOf("core-routers"))!;
    await page.goto(`${base}/credentials/${used}/edit`);
    await page.fill("#c-cred_username", "taken-over");
    await page.click("text=Save changes");
    expect(await page.textContent("h1")).toBe("Refused");
    expect((await api(used)).cred_username).toBe("backup2");
  });

  it("shows a viewer the list without any way to change it", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    await page.goto(`${base}/credentials`);
    expect(await page.locator("#credential-list").count()).toBe(1);
    expect(await page.locator("text=Add a credential set").count()).toBe(0);
    expect(await page.locator("#credential-list a", { hasText: "Edit" }).count()).toBe(0);
    expect((await page.goto(`${base}/credentials/new`))!.status()).toBe(403);
  });
});
