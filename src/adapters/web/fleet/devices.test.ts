import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices, jobs } from "../../../db/schema/index.ts";
import { createWebTestContext, csrfIn, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { createDevice, day, storeVersion } from "../../../modules/configs/test-fixtures.ts";

/** The devices list and the device page: the API's rules (filters, scope, abilities) seen through pages. */
let t: WebTestContext;
let admin: WebClient;
let ids: Record<string, number>;
const SECRET = "never-show-this-9f3c";

const namesIn = (html: string) =>
  [...html.matchAll(/<td><a href="\/devices\/\d+">([^<]+)<\/a><\/td>/g)].map((m) => m[1]);

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  ids = {};
  for (const [name, ip, vendor, tags] of [
    ["core-ams-1", "192.0.2.1", "Cisco", ["core"]],
    ["edge-ams-2", "192.0.2.2", "Juniper", ["edge"]],
    ["edge-fra-3", "192.0.2.3", "Cisco", ["edge"]],
  ] as const) {
    ids[name] = await createDevice(t, token, {
      device_name: name,
      device_ip: ip,
      device_vendor: vendor,
      device_tags: tags,
      device_username: "backup",
      device_password: SECRET,
    });
  }
  await t.db.update(devices).set({ status: "unreachable" }).where(eq(devices.id, ids["edge-fra-3"]!));
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
});
afterAll(() => t.close());

describe("the devices list's export", () => {
  /** The device_name column of a CSV export (no field of these devices holds a comma or a quote). */
  const csvNames = (csv: string) => {
    const [header, ...rows] = csv.trim().split("\n");
    const column = header!.split(",").indexOf("device_name");
    return rows.map((line) => line.split(",")[column]);
  };

  it("downloads what the page selects (filters, search, sort), every page, as CSV or JSON, without secrets", async () => {
    const page = await (await admin.get("/devices?filter[device_vendor]=cisco&per_page=1")).text();
    expect(page).toContain('href="/devices/export?filter%5Bdevice_vendor%5D=cisco&amp;format=csv"');
    const csv = await admin.get("/devices/export?filter%5Bdevice_vendor%5D=cisco&format=csv");
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="devices-\d{4}-\d{2}-\d{2}\.csv"$/);
    const text = await csv.text();
    expect(text.split("\n")[0]).toMatch(/^id,device_name,device_ip,/);
    expect(csvNames(text)).toEqual(["core-ams-1", "edge-fra-3"]);
    expect(text).not.toContain(SECRET);
    const json = await admin.get("/devices/export?search=ams&sort=-device_name&format=json");
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body = await json.text();
    expect((JSON.parse(body) as { device_name: string }[]).map((d) => d.device_name)).toEqual([
      "edge-ams-2",
      "core-ams-1",
    ]);
    expect(body).not.toContain(SECRET);
  });

  it("exports only a scoped user's devices, and refuses a bad filter with the list's own problem", async () => {
    await t.role({ name: "edge-export", permissions: ["devices.read"], tags: ["edge"] });
    await t.user({ username: "edge-exporter", role: "edge-export" });
    const scoped = t.client();
    await scoped.login("edge-exporter");
    const csv = await (await scoped.get("/devices/export")).text();
    expect(csvNames(csv)).toEqual(["edge-ams-2", "edge-fra-3"]);
    expect((await t.client().get("/devices/export")).status).toBe(302);
    const bad = await admin.get("/devices/export?sort=no_such_field");
    expect(bad.status).toBe(422);
  });
});

describe("the devices list", () => {
  it("sends a visitor without a session to the login form", async () => {
    const res = await t.client().get("/devices?search=ams");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?next=%2Fdevices%3Fsearch%3Dams");
  });

  it("searches, filters and sorts with the API's query parameters", async () => {
    expect(namesIn(await (await admin.get("/devices")).text())).toEqual(["core-ams-1", "edge-ams-2", "edge-fra-3"]);
    expect(namesIn(await (await admin.get("/devices?search=ams")).text())).toEqual(["core-ams-1", "edge-ams-2"]);
    expect(namesIn(await (await admin.get("/devices?filter[device_tags]=edge&sort=-device_name")).text())).toEqual([
      "edge-fra-3",
      "edge-ams-2",
    ]);
    expect(namesIn(await (await admin.get("/devices?filter[device_vendor]=cisco")).text())).toEqual([
      "core-ams-1",
      "edge-fra-3",
    ]);
    expect(namesIn(await (await admin.get("/devices?filter[status]=unreachable")).text())).toEqual(["edge-fra-3"]);
    const paged = await (await admin.get("/devices?per_page=2&page=2")).text();
    expect(namesIn(paged)).toEqual(["edge-fra-3"]);
    expect(paged).toContain("3-3 of 3 devices");
  });

  it("drops the empty fields a filter form sends, and answers a bad query as the API would (422)", async () => {
    const res = await admin.get("/devices?search=&filter%5Bstatus%5D=&filter%5Bdevice_tags%5D=edge");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/devices?filter%5Bdevice_tags%5D=edge");
    const bad = await admin.get("/devices?sort=password");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("sort cannot use &#39;password&#39;");
  });

  it("shows a scoped user only the devices in scope, and answers 404 for the others' pages", async () => {
    await t.role({ name: "edge-ops", permissions: ["devices.read", "configs.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-ops" });
    const scoped = t.client();
    await scoped.login("edgy");
    const page = await (await scoped.get("/devices")).text();
    expect(namesIn(page)).toEqual(["edge-ams-2", "edge-fra-3"]);
    // Tag names are listed only to a role that may list tags through the API; this one types a tag instead.
    expect(page).not.toContain('<option value="core">');
    expect(page).toContain('<input type="search" id="filter-tag" name="filter[device_tags]"');
    expect(await (await admin.get("/devices")).text()).toContain('<option value="core">core</option>');
    expect((await scoped.get(`/devices/${ids["core-ams-1"]}`)).status).toBe(404);
    expect((await scoped.get(`/devices/${ids["edge-ams-2"]}`)).status).toBe(200);
  });

  it("offers the tags, categories and vendors as lists by name to a role that may list them, and text fields to others", async () => {
    const token = await t.token();
    for (const name of ["Zurich racks", "access layer"])
      expect((await t.call("/api/v1/categories", { method: "POST", token, body: { name } })).status).toBe(201);
    const options = (html: string, id: string) => {
      const select = html.match(new RegExp(`<select id="${id}"[^>]*>([\\s\\S]*?)</select>`))?.[1];
      return select && [...select.matchAll(/<option value="[^"]*"[^>]*>([^<]*)<\/option>/g)].map((m) => m[1]);
    };
    const form = await (await admin.get("/devices?filter[status]=up")).text();
    expect(options(form, "filter-tag")).toEqual(["Any", "core", "edge"]);
    const categories = options(form, "filter-category")!;
    expect(categories.indexOf("access layer")).toBeLessThan(categories.indexOf("Zurich racks"));
    const vendors = options(form, "filter-vendor")!;
    expect(vendors).toContain("Juniper");
    expect(vendors.indexOf("Cisco")).toBeLessThan(vendors.indexOf("Juniper"));
    expect(options(form, "filter-status")).toEqual(["Any", "unknown", "up", "unreachable"]);
    expect(form).toMatch(/<option value="up" selected="">up<\/option>|<option value="up" selected>up<\/option>/);

    await t.role({ name: "devices-only", permissions: ["devices.read"] });
    await t.user({ username: "plain", role: "devices-only" });
    const plain = t.client();
    await plain.login("plain");
    const bare = await (await plain.get("/devices?filter[device_vendor]=Cisco")).text();
    expect(options(bare, "filter-tag")).toBeUndefined();
    expect(bare).toMatch(/<input type="search" id="filter-vendor" name="filter\[device_vendor\]" value="Cisco"/);
    expect(bare).not.toContain('id="filter-category"');
  });

  it("refuses a role without devices.read with 403", async () => {
    await t.role({ name: "configs-only", permissions: ["configs.read"] });
    await t.user({ username: "narrow", role: "configs-only" });
    const browser = t.client();
    await browser.login("narrow");
    const res = await browser.get("/devices");
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("This page needs the devices.read ability");
  });
});

describe("bulk enable and disable", () => {
  const enabledOf = async (id: number) =>
    (await t.db.select({ enabled: devices.enabled }).from(devices).where(eq(devices.id, id)))[0]!.enabled;

  it("disables the selected devices for a user with devices.write, and goes back to the list", async () => {
    const csrf = csrfIn(await (await admin.get("/devices?filter[device_tags]=edge")).text())!;
    const res = await admin.postForm("/devices/bulk", {
      _csrf: csrf,
      action: "disable",
      ids: [String(ids["edge-ams-2"]), String(ids["edge-fra-3"])],
      back: "/devices?filter%5Bdevice_tags%5D=edge",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/devices?filter%5Bdevice_tags%5D=edge&disabled=2");
    expect(await enabledOf(ids["edge-ams-2"]!)).toBe(false);
    expect(await enabledOf(ids["edge-fra-3"]!)).toBe(false);
    expect(await (await admin.get(res.headers.get("location")!)).text()).toContain("Disabled 2 devices");
    await admin.postForm("/devices/bulk", {
      _csrf: csrf,
      action: "enable",
      ids: [String(ids["edge-ams-2"]), String(ids["edge-fra-3"])],
    });
    expect(await enabledOf(ids["edge-ams-2"]!)).toBe(true);
  });

  it("changes nothing without the session's CSRF token, for a role without devices.write, or beyond the scope", async () => {
    const id = String(ids["core-ams-1"]);
    expect((await admin.postForm("/devices/bulk", { _csrf: "forged", action: "disable", ids: [id] })).status).toBe(403);
    await t.user({ username: "watcher", role: "viewer" });
    const viewer = t.client();
    await viewer.login("watcher");
    const page = await (await viewer.get("/devices")).text();
    expect(page).not.toContain("Disable selected");
    expect(
      (await viewer.postForm("/devices/bulk", { _csrf: csrfIn(page)!, action: "disable", ids: [id] })).status,
    ).toBe(403);
    await t.role({ name: "edge-writers", permissions: ["devices.read", "devices.write"], tags: ["edge"] });
    await t.user({ username: "edgewriter", role: "edge-writers" });
    const scoped = t.client();
    await scoped.login("edgewriter");
    const scopedCsrf = csrfIn(await (await scoped.get("/devices")).text())!;
    // As the API's bulk route: the item outside the scope is named by its index, as if it did not exist.
    expect((await scoped.postForm("/devices/bulk", { _csrf: scopedCsrf, action: "disable", ids: [id] })).status).toBe(
      422,
    );
    expect(await enabledOf(ids["core-ams-1"]!)).toBe(true);
  });
});

describe("the device page", () => {
  it("shows the details, how it logs in without any secret, the backups per command, and the last failure with what to do", async () => {
    const id = ids["core-ams-1"]!;
    const first = await storeVersion(t, { deviceId: id, text: "hostname core-ams-1\n", at: day(1) });
    const second = await storeVersion(t, {
      deviceId: id,
      text: "hostname core-ams-1\nntp server 192.0.2.123\n",
      at: day(2),
    });
    await storeVersion(t, { deviceId: id, text: "Version 17.3\n", at: day(2), command: "show version" });
    await t.db.insert(jobs).values({
      type: "download",
      deviceId: id,
      state: "finished",
      outcome: "auth_failed",
      message: "Permission denied (password)",
      trigger: "schedule",
      runAfter: day(3),
      createdAt: day(3),
      startedAt: day(3),
      finishedAt: day(3),
    });
    const html = await (await admin.get(`/devices/${id}`)).text();
    expect(html).not.toContain(SECRET);
    expect(html).toContain("Its own: user backup, password set");
    const backups = html.slice(html.indexOf('id="backups"'));
    expect(backups.indexOf("show running-config")).toBeGreaterThan(0);
    expect(backups).toContain(`<a href="/configs/${second.configId}">v2</a>`);
    expect(backups).toContain(`href="/configs/diff?from=${first.configId}&amp;to=${second.configId}"`);
    expect(backups).toContain("show version");
    const failure = html.slice(html.indexOf('id="last-failure"'), html.indexOf('id="backups"'));
    expect(failure).toContain("auth_failed");
    expect(failure).toContain("Permission denied (password)");
    expect(failure).toContain("Check the username and passwords");
  });

  it("names its category, template, profile and credential set, never the set's secret", async () => {
    const token = await t.token();
    const created = async (path: string, body: Record<string, unknown>) => {
      const res = await t.call(path, { method: "POST", token, body });
      expect(res.status).toBe(201);
      return res.body.data.id as number;
    };
    const category = await created("/api/v1/categories", { name: "Branch routers" });
    const profile = await created("/api/v1/device-profiles", { name: "Branch defaults" });
    const credential = await created("/api/v1/device-credentials", {
      cred_name: "branch-login",
      cred_username: "netops",
      cred_password: SECRET,
    });
    const templates = await t.call("/api/v1/templates?per_page=1&sort=name", { token });
    const template = templates.body.data[0] as { id: number; name: string };
    const id = await createDevice(t, token, {
      device_name: "branch-1",
      device_ip: "192.0.2.40",
      device_category_id: category,
      device_profile_id: profile,
      device_cred_id: credential,
      device_template_id: template.id,
    });
    const html = await (await admin.get(`/devices/${id}`)).text();
    const value = (term: string) => html.match(new RegExp(`<dt>${term}</dt>\\s*<dd>([^<]*)</dd>`))?.[1];
    expect(value("Category")).toBe("Branch routers");
    expect(value("Template")).toBe(template.name);
    expect(value("Profile")).toBe("Branch defaults");
    expect(value("Logs in with")).toBe("Credential set &#39;branch-login&#39; (user netops)");
    expect(html).not.toContain(SECRET);
  });

  it("answers 404 for an id that names no device", async () => {
    expect((await admin.get("/devices/99999")).status).toBe(404);
    expect((await admin.get("/devices/abc")).status).toBe(404);
  });

  it("queues a download now and reports its progress until a collector finishes it", async () => {
    const id = ids["edge-ams-2"]!;
    const csrf = csrfIn(await (await admin.get(`/devices/${id}`)).text())!;
    const res = await admin.postForm(`/devices/${id}/download-now`, { _csrf: csrf });
    expect(res.status).toBe(303);
    const [job] = await t.db.select().from(jobs).where(eq(jobs.deviceId, id));
    expect(job).toMatchObject({ trigger: "download_now", state: "queued" });
    expect(res.headers.get("location")).toBe(`/devices/${id}?job=${job!.id}`);
    const page = await (await admin.get(res.headers.get("location")!)).text();
    expect(page).toContain(`data-poll="/jobs/${job!.id}/status"`);
    expect(await (await admin.get(`/jobs/${job!.id}/status`)).json()).toMatchObject({
      id: job!.id,
      state: "queued",
      outcome: null,
    });
    await t.db
      .update(jobs)
      .set({ state: "finished", outcome: "success", finishedAt: day(4) })
      .where(eq(jobs.id, job!.id));
    expect(await (await admin.get(`/jobs/${job!.id}/status`)).json()).toMatchObject({
      state: "finished",
      outcome: "success",
    });
    const done = await (await admin.get(res.headers.get("location")!)).text();
    expect(done).toContain(`Download ${job!.id} finished: success`);
    expect(done).not.toContain("data-poll=");
  });

  it("refuses download now on a disabled device with the API's 409", async () => {
    const id = ids["edge-fra-3"]!;
    const csrf = csrfIn(await (await admin.get(`/devices/${id}`)).text())!;
    await t.db.update(devices).set({ enabled: false }).where(eq(devices.id, id));
    const res = await admin.postForm(`/devices/${id}/download-now`, { _csrf: csrf });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("is disabled; enable it before downloading");
    await t.db.update(devices).set({ enabled: true }).where(eq(devices.id, id));
  });
});
