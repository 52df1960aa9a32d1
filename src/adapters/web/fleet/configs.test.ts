import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { createDevice, day, storeVersion } from "../../../modules/configs/test-fixtures.ts";

/** The configuration view and the diff view: the API's versions, compare and options, through pages. */
let t: WebTestContext;
let admin: WebClient;
let v1: number, v2: number, version: number, other: number;

const OLD =
  "hostname core-1\n! Last configuration change at 10:00\ninterface Gi0/1\n ip address 10.0.0.1 255.255.255.0\n description <uplink> & more\n";
const NEW =
  "hostname core-1\n! Last configuration change at 11:30\ninterface Gi0/1\n ip address 10.0.0.2 255.255.255.0\n description <uplink> & more\n";

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  const id = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
  v1 = (await storeVersion(t, { deviceId: id, text: OLD, at: day(1) })).configId;
  v2 = (await storeVersion(t, { deviceId: id, text: NEW, at: day(2) })).configId;
  version = (await storeVersion(t, { deviceId: id, text: "Version 1\n", at: day(2), command: "show version" }))
    .configId;
  const edge = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
  other = (await storeVersion(t, { deviceId: edge, text: "hostname edge-1\n", at: day(1) })).configId;
  const rule = await t.call("/api/v1/compare-exclusions", {
    method: "POST",
    token,
    body: { pattern: "^! Last configuration change at " },
  });
  expect(rule.status).toBe(201);
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
});
afterAll(() => t.close());

describe("the configuration view", () => {
  it("shows the text escaped, one numbered line each, with find and download", async () => {
    const html = await (await admin.get(`/configs/${v1}`)).text();
    expect(html).toContain('<span class="line" id="L5" data-n="5"> description &lt;uplink&gt; &amp; more</span>');
    expect(html).not.toContain('data-n="6"');
    expect(html).toContain('id="find"');
    const download = await admin.get(`/configs/${v1}/download`);
    expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="core-1.*\.txt"$/);
    expect(await download.text()).toBe(OLD);
  });

  it("answers 404 for a version outside the scope and 403 without configs.read", async () => {
    await t.role({ name: "edge-readers", permissions: ["devices.read", "configs.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-readers" });
    const scoped = t.client();
    await scoped.login("edgy");
    expect((await scoped.get(`/configs/${v1}`)).status).toBe(404);
    expect((await scoped.get(`/configs/${v1}/download`)).status).toBe(404);
    expect((await scoped.get(`/configs/diff?from=${v1}&to=${v2}`)).status).toBe(404);
    expect((await scoped.get(`/configs/${other}`)).status).toBe(200);
    await t.role({ name: "devices-only", permissions: ["devices.read"] });
    await t.user({ username: "narrow", role: "devices-only" });
    const narrow = t.client();
    await narrow.login("narrow");
    expect((await narrow.get(`/configs/${other}`)).status).toBe(403);
  });
});

describe("the diff view", () => {
  it("lays the versions side by side with the changed words marked", async () => {
    const html = await (await admin.get(`/configs/diff?from=${v1}&to=${v2}`)).text();
    expect(html).toContain("2 lines added, 2 removed");
    expect(html).toContain('<td class="del"> ip address 10.0.0.<mark>1</mark> 255.255.255.0</td>');
    expect(html).toContain('<td class="add"> ip address 10.0.0.<mark>2</mark> 255.255.255.0</td>');
    expect(html).toContain('<td class="ctx"> description &lt;uplink&gt; &amp; more</td>');
  });

  it("shows the same change inline, removed lines before added ones", async () => {
    const html = await (await admin.get(`/configs/diff?from=${v1}&to=${v2}&view=inline&context=0`)).text();
    const signs = [...html.matchAll(/<td class="sign">([-+ ])<\/td>/g)].map((m) => m[1]).join("");
    expect(signs).toBe("-+-+");
    expect(html).toContain("⋯ 1 unchanged line (old 3-3, new 3-3)");
  });

  it("leaves out the compare-excluded lines when asked", async () => {
    const html = await (await admin.get(`/configs/diff?from=${v1}&to=${v2}&exclusions=true`)).text();
    expect(html).toContain("1 line added, 1 removed");
    expect(html).not.toContain("Last configuration change at 11:30");
  });

  it("answers the API's 422 for bad options and for versions of different commands", async () => {
    const bad = await admin.get(`/configs/diff?from=${v1}&to=${v2}&context=500`);
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("context must be at most 100");
    const mixed = await admin.get(`/configs/diff?from=${v1}&to=${version}`);
    expect(mixed.status).toBe(422);
    expect(await mixed.text()).toContain("a diff compares versions of the same command");
  });
});
