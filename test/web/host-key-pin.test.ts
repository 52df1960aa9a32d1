import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices } from "../../src/db/schema/index.ts";
import { createDevice } from "../../src/modules/configs/test-fixtures.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Pinning a given SSH host key fingerprint from the browser (POST /devices/{id}/host-key/reset with `fingerprint`). */
const unavailable = chromiumMissing("test/web/host-key-pin.test.ts");
const HOSTILE = `edge-"><img/src=x/onerror=alert(1)>`;
const KEY_A = "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU";
const KEY_B = "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s";

describe.skipIf(unavailable)("pinning a host key in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  const dev: Record<string, number> = {};
  const pinned = async (id: number) =>
    (await t.db.select({ f: devices.hostKeyFingerprint }).from(devices).where(eq(devices.id, id)))[0]!.f;

  beforeAll(async () => {
    t = await createWebTestContext();
    const token = await t.token();
    b = await startBrowserWithCast(t, ["devices.read", "devices.write"]);
    dev.edge = await createDevice(t, token, { device_name: HOSTILE, device_tags: ["edge"] });
    dev.core = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("pins a typed fingerprint from the device page, then replaces it, saying what was pinned before", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/${dev.edge}`);
    await page.click(`a[href="/devices/${dev.edge}/host-key"]`);
    expect(await page.textContent("h1")).toBe(`SSH host key of ${HOSTILE}`);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.textContent("#pinned-key")).toContain("No key is pinned");
    await page.fill("#h-fingerprint", ` ${KEY_A} `);
    await page.click("button:text('Pin the fingerprint')");
    expect(await page.textContent("[role=status]")).toBe(`Pinned ${KEY_A}.`);
    expect(await pinned(dev.edge!)).toBe(KEY_A);
    await page.fill("#h-fingerprint", KEY_B);
    await page.click("button:text('Pin the fingerprint')");
    expect(await page.textContent("[role=status]")).toBe(`Pinned ${KEY_B} (was ${KEY_A}).`);
    expect(await page.textContent("#pinned-key")).toContain(KEY_B);
    await b.shoot("device-host-key");
    // Forgetting it is the device page's "Accept new host key".
    await page.click("button:text('Forget the pinned key (accept the next one)')");
    await page.waitForURL(`${base}/devices/${dev.edge}?done=host_key`);
    expect(await pinned(dev.edge!)).toBeNull();
  });

  it("shows a malformed fingerprint under its field and pins nothing", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/${dev.core}/host-key`);
    await page.fill("#h-fingerprint", "MD5:aa:bb");
    await page.click("button:text('Pin the fingerprint')");
    expect(await page.textContent("#h-fingerprint-error")).toBe(
      "must be an OpenSSH SHA-256 fingerprint: SHA256: followed by 43 base64 characters",
    );
    expect(await page.inputValue("#h-fingerprint")).toBe("MD5:aa:bb");
    expect(await pinned(dev.core!)).toBeNull();
  });

  it("refuses a forged form", async () => {
    const { page, base } = b;
    await page.goto(`${base}/devices/${dev.core}/host-key`);
    const status = await page.evaluate(
      async ([id, key]) =>
        (
          await fetch(`/devices/${id}/host-key/pin`, {
            method: "POST",
            body: `_csrf=forged&fingerprint=${encodeURIComponent(key!)}`,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      [String(dev.core), KEY_A],
    );
    expect(status).toBe(403);
    expect(await pinned(dev.core!)).toBeNull();
  });

  it("keeps a scoped user to their devices", async () => {
    const { page, base } = b;
    await b.loginAs("edgy");
    try {
      expect((await page.goto(`${base}/devices/${dev.core}/host-key`))!.status()).toBe(404);
      await page.goto(`${base}/devices/${dev.edge}/host-key`);
      const status = await page.evaluate(
        async ([id, key, csrf]) =>
          (
            await fetch(`/devices/${id}/host-key/pin`, {
              method: "POST",
              body: `_csrf=${csrf}&fingerprint=${encodeURIComponent(key!)}`,
              headers: { "content-type": "application/x-www-form-urlencoded" },
            })
          ).status,
        [String(dev.core), KEY_A, (await b.csrf())!],
      );
      expect(status).toBe(404);
      expect(await pinned(dev.core!)).toBeNull();
      await page.fill("#h-fingerprint", KEY_A);
      await page.click("button:text('Pin the fingerprint')");
      expect(await pinned(dev.edge!)).toBe(KEY_A);
    } finally {
      await b.loginAs("admin1");
    }
  });

  it("gives a role without devices.write no link and no page", async () => {
    const { page, base } = b;
    await b.loginAs("viewer1");
    try {
      await page.goto(`${base}/devices/${dev.core}`);
      expect(await page.locator(`a[href="/devices/${dev.core}/host-key"]`).count()).toBe(0);
      expect((await page.goto(`${base}/devices/${dev.core}/host-key`))!.status()).toBe(403);
    } finally {
      await b.loginAs("admin1");
    }
  });
});
