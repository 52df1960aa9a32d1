import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices, remoteCollectors, zones } from "../../src/db/schema/index.ts";
import { hashSecret } from "../../src/modules/zones/index.ts";
import { newKeyPair } from "../../src/platform/secrets/sealed-box.ts";
import {
  chromiumMissing,
  createWebTestContext,
  startBrowserWithCast,
  type Browser,
  type WebTestContext,
} from "./chromium.ts";

/** Zones and their remote collectors from the browser, through the zones module (docs/zones.md). */
const unavailable = chromiumMissing("test/web/zones.test.ts");
const HOSTILE = `"><img src=x onerror=alert(1)>`;

describe.skipIf(unavailable)("zone pages in headless Chromium", () => {
  let t: WebTestContext;
  let b: Browser;
  let token: string;
  const zoneRow = async (name: string) => (await t.db.select().from(zones).where(eq(zones.name, name)))[0];
  const enroll = async (key: string, name: string) => {
    const res = await t.request("/collector-api/v1/enroll", {
      method: "POST",
      body: { enrollment_key: key, name, public_key: newKeyPair().publicKey },
      offContract: "the collectors' API is not a user API (docs/zones.md)",
    });
    expect(res.status).toBe(201);
    const { credential } = (await res.json()).data;
    const beat = await t.request("/collector-api/v1/heartbeat", {
      method: "POST",
      body: { version: "7.1.2", sessions: 2, spool_bytes: 2048, spool_dropped: 0 },
      headers: { "collector-credential": credential },
      offContract: "the collectors' API is not a user API (docs/zones.md)",
    });
    expect(beat.status).toBe(200);
    return credential as string;
  };

  beforeAll(async () => {
    t = await createWebTestContext();
    token = await t.token();
    b = await startBrowserWithCast(t, ["system.read", "system.write", "devices.read", "devices.write", "tags.read"]);
  });
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it("adds a remote zone, shows its key once, and lists its collector's heartbeat", async () => {
    const { page, base } = b;
    await page.goto(`${base}/zones`);
    await page.click("text=Add a zone");
    await page.fill("#zones-name", "branch-ams");
    await page.selectOption("#zones-mode", "remote");
    await page.click("button:text('Add zone')");
    const key = (await page.textContent("#enrollment-key"))!;
    const row = (await zoneRow("branch-ams"))!;
    expect(row.mode).toBe("remote");
    // The page showed the key whose hash is stored, and only the hash is.
    expect(row.enrollmentKeyHash).toBe(await hashSecret(key));
    expect(await page.textContent("pre")).toContain(`--enroll ${key}`);
    await b.shoot("zone-key");

    await enroll(key, "ams-1");
    await page.goto(`${base}/zones`);
    const listed = page.locator("#zones-list tr", { hasText: "branch-ams" });
    const text = (await listed.textContent())!;
    expect(text).toContain("remote");
    expect(text).toContain("ams-1");
    expect(text).toContain("alive");
    expect(text).toContain("v7.1.2");
    expect(text).toContain("2 sessions");
    expect(text).not.toContain(key);
    await b.shoot("zones");
  });

  it("issues a new key, revokes it, and revokes then deletes a collector", async () => {
    const { page, base } = b;
    const zone = (await zoneRow("branch-ams"))!;
    const before = zone.enrollmentKeyHash;
    await page.goto(`${base}/zones/${zone.id}`);
    await page.click("button:text('Issue a new key')");
    const key = (await page.textContent("#enrollment-key"))!;
    expect((await zoneRow("branch-ams"))!.enrollmentKeyHash).toBe(await hashSecret(key));
    expect(await hashSecret(key)).not.toBe(before);

    await page.goto(`${base}/zones/${zone.id}`);
    await page.click("button:text('Revoke the key')");
    await page.waitForURL(/done=key-revoked/);
    expect((await zoneRow("branch-ams"))!.enrollmentKeyHash).toBeNull();
    expect(await page.textContent("#key-state")).toContain("No key");

    const [collector] = await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.zoneId, zone.id));
    await page.locator("#zone-collectors tr", { hasText: "ams-1" }).locator("button:text('Revoke')").click();
    await page.waitForURL(/done=revoked/);
    expect(await page.locator("#zone-collectors tr", { hasText: "ams-1" }).textContent()).toContain("revoked");
    const [revoked] = await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.id, collector!.id));
    expect(revoked!.revokedAt).not.toBeNull();
    await page.locator("#zone-collectors tr", { hasText: "ams-1" }).locator("button:text('Delete')").click();
    await page.waitForURL(/done=deleted/);
    expect(await t.db.select().from(remoteCollectors).where(eq(remoteCollectors.id, collector!.id))).toEqual([]);
  });

  it("shows a refused field next to it, and a zone holding devices is not deleted", async () => {
    const { page, base } = b;
    await page.goto(`${base}/zones/new`);
    await page.fill("#zones-name", "BRANCH-AMS");
    await page.click("button:text('Add zone')");
    expect(await page.textContent("#zones-name-error")).toBe("'BRANCH-AMS' is already taken");
    expect(await page.inputValue("#zones-name")).toBe("BRANCH-AMS");

    // The device form offers the zones; a device put in one keeps it from being deleted.
    const zone = (await zoneRow("branch-ams"))!;
    await page.goto(`${base}/devices/new`);
    await page.fill("#f-device_name", "ams-edge-1");
    await page.fill("#f-device_ip", "192.0.2.10");
    await page.selectOption("#f-device_vendor", "Cisco");
    await page.selectOption("#f-zone_id", { label: "branch-ams" });
    await page.click("button[type=submit]:text('Add device')");
    await page.waitForURL(/\/devices\/\d+/);
    const [device] = await t.db.select().from(devices).where(eq(devices.name, "ams-edge-1"));
    expect(device!.zoneId).toBe(zone.id);
    await page.goto(`${base}/zones/${zone.id}/delete`);
    await page.click("button:text('Delete the zone')");
    expect(await page.textContent(".alert.error")).toContain("holds 1 device");
    expect(await zoneRow("branch-ams")).toBeDefined();
  });

  it("edits a zone and deletes an empty one", async () => {
    const { page, base } = b;
    await page.goto(`${base}/zones/new`);
    await page.fill("#zones-name", "lab");
    await page.click("button:text('Add zone')");
    await page.waitForURL(/done=created/);
    const lab = (await zoneRow("lab"))!;
    expect(lab.mode).toBe("local");
    await page.goto(`${base}/zones/${lab.id}/edit`);
    await page.fill("#zones-description", "the test bench");
    await page.click("text=Save changes");
    await page.waitForURL(/done=saved/);
    expect((await t.call(`/api/v1/zones/${lab.id}`, { token })).body.data.description).toBe("the test bench");
    await page.goto(`${base}/zones/${lab.id}/delete`);
    await page.click("button:text('Delete the zone')");
    await page.waitForURL(/done=deleted/);
    expect(await zoneRow("lab")).toBeUndefined();
  });

  it("refuses a forged form, and shows a hostile name as text", async () => {
    const { page, base } = b;
    await page.goto(`${base}/zones`);
    const status = await page.evaluate(
      async () =>
        (
          await fetch("/zones/new", {
            method: "POST",
            body: "_csrf=nope&name=forged&mode=remote",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
    );
    expect(status).toBe(403);
    expect(await zoneRow("forged")).toBeUndefined();
    const zone = (await zoneRow("branch-ams"))!;
    const forgedKey = await page.evaluate(
      async (id) =>
        (
          await fetch(`/zones/${id}/enrollment-key`, {
            method: "POST",
            body: "_csrf=nope",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      zone.id,
    );
    expect(forgedKey).toBe(403);
    expect((await zoneRow("branch-ams"))!.enrollmentKeyHash).toBeNull();

    await page.goto(`${base}/zones/new`);
    await page.fill("#zones-name", HOSTILE);
    await page.click("button:text('Add zone')");
    await page.waitForURL(/done=created/);
    expect(await page.locator("#zones-list strong", { hasText: HOSTILE }).count()).toBe(1);
    expect(await page.locator("main img").count()).toBe(0);
  });

  it("shows a scoped user only the zones holding its devices, and no way to change those it does not cover", async () => {
    const { page, base } = b;
    const made = await t.call("/api/v1/zones", {
      method: "POST",
      token,
      body: { name: "edge-site", mode: "remote" },
    });
    expect(made.status).toBe(201);
    const edgeZone = made.body.data.id as number;
    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: {
        device_name: "edge-1",
        device_ip: "192.0.2.20",
        device_vendor: "Cisco",
        device_tags: ["edge"],
        zone_id: edgeZone,
      },
    });
    expect(dev.status).toBe(201);
    await b.loginAs("edgy");
    await page.goto(`${base}/zones`);
    const list = (await page.textContent("#zones-list"))!;
    expect(list).toContain("edge-site");
    expect(list).not.toContain("branch-ams");
    const ams = (await zoneRow("branch-ams"))!;
    expect((await page.goto(`${base}/zones/${ams.id}`))!.status()).toBe(404);
    expect((await page.goto(`${base}/zones/${ams.id}/edit`))!.status()).toBe(404);
    // Its own zone's key it may rotate: every device of the zone is in its scope.
    await page.goto(`${base}/zones/${edgeZone}`);
    await page.click("button:text('Issue a new key')");
    expect(await page.textContent("#enrollment-key")).toMatch(/^nkz_/);
    await b.loginAs("admin1");
  });

  it("has no zone page nor menu item for a role without system.read, and no controls without system.write", async () => {
    const { page, base } = b;
    await t.role({ name: "devices-only", permissions: ["devices.read", "devices.write"] });
    await t.user({ username: "devonly", role: "devices-only" });
    await b.loginAs("devonly");
    expect((await page.goto(`${base}/zones`))!.status()).toBe(403);
    expect(await page.locator("nav a[href='/zones']").count()).toBe(0);
    await page.goto(`${base}/devices/new`);
    expect(await page.locator("#f-zone_id").count()).toBe(0);

    await b.loginAs("viewer1");
    await page.goto(`${base}/zones`);
    expect(await page.locator("#zones-list").count()).toBe(1);
    expect(await page.locator("a", { hasText: "Add a zone" }).count()).toBe(0);
    const ams = (await zoneRow("branch-ams"))!;
    await page.goto(`${base}/zones/${ams.id}`);
    expect(
      await page
        .locator("button")
        .filter({ hasText: /key|Revoke|Delete/ })
        .count(),
    ).toBe(0);
    expect((await page.goto(`${base}/zones/new`))!.status()).toBe(403);
    await b.loginAs("admin1");
  });
});
