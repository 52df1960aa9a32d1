import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices } from "../../../db/schema/index.ts";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { createDevice } from "../../../modules/configs/test-fixtures.ts";

/**
 * The inventory a backup or a detection reads (serial, OS version, host name: docs/discovery.md) on the device's
 * page, and the devices list filtered on it as the API's list is.
 */
let t: WebTestContext;
let admin: WebClient;
let read: number;
let unread: number;

/** The device page's details, label to text. */
const detailsOf = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<dt>([^<]+)<\/dt><dd>([^<]*)<\/dd>/g)].map((m) => [m[1], m[2]] as [string, string]),
  );

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  read = await createDevice(t, token, { device_name: "edge-read-1", device_ip: "192.0.2.31" });
  unread = await createDevice(t, token, { device_name: "edge-unread-2", device_ip: "192.0.2.32" });
  // As a backup's show version leaves them (collector/download.ts).
  await t.db
    .update(devices)
    .set({ serial: "FOC1010X1YZ", osVersion: "15.2(7)E3", hostname: "edge-read-1.lab", inventoryAt: t.clock.now() })
    .where(eq(devices.id, read));
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
});
afterAll(() => t.close());

describe("a device's inventory on the pages", () => {
  it("shows the serial, OS version and host name read, and no empty rows for a device not read yet", async () => {
    expect(detailsOf(await (await admin.get(`/devices/${read}`)).text())).toMatchObject({
      Serial: "FOC1010X1YZ",
      "OS version": "15.2(7)E3",
      "Host name": "edge-read-1.lab",
    });
    const none = detailsOf(await (await admin.get(`/devices/${unread}`)).text());
    expect(Object.keys(none)).toContain("Model");
    expect(Object.keys(none)).not.toContain("Serial");
    expect(Object.keys(none)).not.toContain("OS version");
  });

  it("filters the devices list on them, in any case", async () => {
    for (const filter of [
      "device_serial]=foc1010x1yz",
      "device_os_version]=15.2(7)E3",
      "device_hostname]=EDGE-READ-1.lab",
    ]) {
      const html = await (await admin.get(`/devices?filter[${filter}`)).text();
      expect(html, filter).toContain(`href="/devices/${read}"`);
      expect(html, filter).not.toContain(`href="/devices/${unread}"`);
    }
  });
});
