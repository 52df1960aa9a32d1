import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import {
  activityLog,
  categories,
  credentials,
  deviceProfiles,
  devices,
  tags,
  templates,
} from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
let reader: string;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  reader = await t.token(["devices.read"]);
});
afterAll(() => t.close());

const post = (body: unknown, token = admin) => t.call("/api/v1/devices", { method: "POST", token, body });
const device = (name: string, extra: Record<string, unknown> = {}) => ({
  device_name: name,
  device_ip: "192.0.2.10",
  device_vendor: "Cisco",
  ...extra,
});

async function seedRef<T extends typeof categories | typeof templates | typeof credentials>(
  table: T,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const now = new Date();
  const [row] = await t.db
    .insert(table)
    .values({ name, nameKey: nameKey(name), createdAt: now, updatedAt: now, ...extra } as never)
    .returning({ id: table.id });
  return row!.id;
}

describe("create and show", () => {
  it("creates a device, answers 201 with Location, and shows it", async () => {
    const res = await post(
      device("create-show-01", {
        device_vendor: "cisco",
        device_model: "C9300",
        device_tags: ["core", "ams"],
        custom: { site: "ams", rack: 12 },
        notes: "row 3",
      }),
    );
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(res.headers.get("location")).toBe(`http://localhost/api/v1/devices/${d.id}`);
    expect(d).toMatchObject({
      device_name: "create-show-01",
      device_ip: "192.0.2.10",
      device_vendor: "Cisco",
      device_model: "C9300",
      device_tags: ["ams", "core"],
      custom: { site: "ams", rack: 12 },
      notes: "row 3",
      enabled: true,
      status: "unknown",
      device_cred_id: 0,
      device_snippet_cred_id: 0,
      last_seen_at: null,
      last_backup_at: null,
    });
    expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const shown = await t.call(`/api/v1/devices/${d.id}`, { token: reader });
    expect(shown).toMatchObject({ status: 200, body: { data: d } });
    expect((await t.call(`/api/v2/devices/${d.id}`, { token: reader })).body.data).toEqual(d);
  });

  it("answers 404 for an unknown id", async () => {
    const res = await t.call("/api/v1/devices/999999", { token: reader });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe("Device 999999 not found");
  });

  it("accepts IPv4, IPv6 and hostnames as device_ip", async () => {
    for (const [i, ip] of [
      "10.1.2.3",
      "2001:db8::1",
      "::1",
      "fe80::1:2:3:4",
      "rtr1.example.net",
      "switch-7",
    ].entries()) {
      expect((await post(device(`ip-ok-${i}-device`, { device_ip: ip }))).status).toBe(201);
    }
  });

  it("stores an IPv6 address in one form, so the same address typed two ways finds one device", async () => {
    const res = await post(device("ip-v6-canonical", { device_ip: "2001:DB8:0:0::A" }));
    expect(res.status).toBe(201);
    expect(res.body.data.device_ip).toBe("2001:db8::a");
    const found = await t.call("/api/v1/devices?filter[device_ip]=2001:db8::a", { token: admin });
    expect(found.body.data.map((d: { device_name: string }) => d.device_name)).toEqual(["ip-v6-canonical"]);
  });
});

describe("validation", () => {
  const expectField = async (body: unknown, field: string, pattern: RegExp) => {
    const res = await post(body);
    expect(res.status).toBe(422);
    expect(res.body.errors[field], JSON.stringify(res.body)).toBeDefined();
    expect(res.body.errors[field].join(" ")).toMatch(pattern);
    return res;
  };

  it("requires device_name and device_ip", async () => {
    const res = await expectField({}, "device_name", /device_name is required/);
    expect(res.body.errors.device_ip.join()).toMatch(/device_ip is required/);
    expect(res.body.message).toBe("device_name is required (and 1 more error)");
  });

  it("device_name: at least 5 characters, no whitespace", async () => {
    await expectField(device("abcd"), "device_name", /at least 5 characters/);
    await expectField(device("core rtr"), "device_name", /must not contain whitespace/);
    await expectField(device("tab\tname"), "device_name", /must not contain whitespace/);
    expect((await post(device("abcde"))).status).toBe(201);
  });

  it("device_name is unique case-insensitively", async () => {
    expect((await post(device("Unique-Name-01"))).status).toBe(201);
    await expectField(device("unique-name-01"), "device_name", /already taken/);
  });

  it("device_ip must be an address or hostname", async () => {
    for (const ip of ["999.1.1.1", "1.2.3", "not a host", "-bad-.example", "2001:db8:::1", ""]) {
      await expectField(
        device("bad-ip-device", { device_ip: ip }),
        "device_ip",
        /IPv4 address, an IPv6 address or a hostname/,
      );
    }
  });

  it("an unknown vendor is a 422 that lists the known ones", async () => {
    const res = await expectField(
      device("vendor-bad-01", { device_vendor: "Acme" }),
      "device_vendor",
      /'Acme' is not a known vendor/,
    );
    expect(res.body.errors.device_vendor[0]).toMatch(/Cisco/);
    expect(res.body.errors.device_vendor[0]).toMatch(/Juniper/);
  });

  it("references must exist", async () => {
    const res = await post(
      device("refs-bad-01", {
        device_category_id: 4242,
        device_template_id: 4243,
        device_cred_id: 4244,
        device_snippet_cred_id: 4245,
        device_profile_id: 4246,
      }),
    );
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual([
      "device_category_id",
      "device_cred_id",
      "device_profile_id",
      "device_snippet_cred_id",
      "device_template_id",
    ]);
  });

  it("types, ranges and shapes", async () => {
    await expectField(device("types-bad-01", { device_port_override: 70000 }), "device_port_override", /at most 65535/);
    await expectField(device("types-bad-01", { device_cred_id: -1 }), "device_cred_id", /0 or a positive id/);
    await expectField(device("types-bad-01", { device_tags: "core" }), "device_tags", /array/);
    await expectField(device("types-bad-01", { custom: { "bad key": 1 } }), "custom.bad key", /letters, digits/);
    await expectField(device("types-bad-01", { custom: { site: { nested: true } } }), "custom.site", /./);
    await expectField(device("types-bad-01", { enabled: "yes" }), "enabled", /boolean/);
  });

  it("reports every problem at once, with the count in the message", async () => {
    const res = await post({ device_name: "a b", device_ip: "nope nope", device_port_override: 0 });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/^device_name .* \(and 3 more errors\)$/);
  });
});

describe("credentials and secrets", () => {
  it("never returns passwords, and stores them encrypted", async () => {
    const res = await post(
      device("secret-dev-01", {
        device_username: "backup",
        device_password: "Pa55-word-never-shown",
        device_enable_password: "En4ble-never-shown",
      }),
    );
    expect(res.status).toBe(201);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain("Pa55-word-never-shown");
    expect(text).not.toContain("En4ble-never-shown");
    expect(res.body.data).toMatchObject({ device_username: "backup", has_password: true, has_enable_password: true });
    expect(res.body.data).not.toHaveProperty("device_password");

    const [row] = await t.db.select().from(devices).where(eq(devices.id, res.body.data.id));
    expect(row!.passwordEnc).not.toContain("Pa55-word-never-shown");
    expect(await t.secrets.decrypt(row!.passwordEnc!)).toBe("Pa55-word-never-shown");

    await t.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const bytes = readFileSync(join(t.dir, "netkeep.db")).toString("latin1");
    expect(bytes).not.toContain("Pa55-word-never-shown");

    const log = await t.db.select().from(activityLog).where(eq(activityLog.subjectId, res.body.data.id));
    expect(JSON.stringify(log)).not.toContain("Pa55-word-never-shown");
  });

  it("PUT keeps passwords it is not sent, null clears one", async () => {
    const { body } = await post(device("secret-dev-02", { device_password: "keep-me-please" }));
    const put = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PUT",
      token: admin,
      body: device("secret-dev-02"),
    });
    expect(put.body.data.has_password).toBe(true);
    const cleared = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_password: null },
    });
    expect(cleared.body.data.has_password).toBe(false);
  });

  it("device_cred_id 0 means own credentials; a credential set id is kept", async () => {
    const credId = await seedRef(credentials, "lab-creds");
    const res = await post(device("cred-dev-01", { device_cred_id: credId, device_snippet_cred_id: 0 }));
    expect(res.body.data).toMatchObject({ device_cred_id: credId, device_snippet_cred_id: 0 });
    const back = await t.call(`/api/v1/devices/${res.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_cred_id: 0 },
    });
    expect(back.body.data.device_cred_id).toBe(0);
  });
});

describe("update", () => {
  it("PATCH changes only what is sent; PUT resets what it leaves out", async () => {
    const { body } = await post(
      device("update-dev-01", {
        device_model: "MX204",
        notes: "keep",
        device_tags: ["edge"],
        device_vendor: "Juniper",
      }),
    );
    const id = body.data.id;
    const patched = await t.call(`/api/v1/devices/${id}`, {
      method: "PATCH",
      token: admin,
      body: { device_model: "MX304" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      device_model: "MX304",
      notes: "keep",
      device_tags: ["edge"],
      device_vendor: "Juniper",
    });

    const put = await t.call(`/api/v1/devices/${id}`, {
      method: "PUT",
      token: admin,
      body: device("update-dev-01b", { device_ip: "198.51.100.1" }),
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({
      device_name: "update-dev-01b",
      device_ip: "198.51.100.1",
      device_model: "",
      notes: "",
      device_tags: [],
      device_vendor: "Cisco",
    });
  });

  it("requires device_vendor on create and replace, from the body or the device's profile, and never clears it", async () => {
    const { device_vendor: _, ...noVendor } = device("vendorless-01");
    const created = await post(noVendor);
    expect(created.status).toBe(422);
    expect(created.body.errors.device_vendor.join()).toMatch(/^device_vendor is required: one of .*Cisco/);
    expect((await post({ ...noVendor, device_vendor: null })).status).toBe(422);

    const bulk = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: { devices: [device("vendor-bulk-01"), noVendor] },
    });
    expect(bulk.status).toBe(422);
    expect(Object.keys(bulk.body.errors)).toEqual(["devices.1.device_vendor"]);

    const profile = await t.call("/api/v1/device-profiles", {
      method: "POST",
      token: admin,
      body: { name: "juniper-edge", vendor: "Juniper" },
    });
    expect(profile.status).toBe(201);
    const fromProfile = await post({ ...noVendor, device_profile_id: profile.body.data.id });
    expect(fromProfile.status).toBe(201);
    expect(fromProfile.body.data.device_vendor).toBe("Juniper");

    const id = fromProfile.body.data.id;
    const put = await t.call(`/api/v1/devices/${id}`, {
      method: "PUT",
      token: admin,
      body: { device_name: "vendorless-01", device_ip: "192.0.2.10" },
    });
    expect(put.status).toBe(422);
    expect(put.body.errors).toHaveProperty("device_vendor");
    const cleared = await t.call(`/api/v1/devices/${id}`, {
      method: "PATCH",
      token: admin,
      body: { device_vendor: null },
    });
    expect(cleared.status).toBe(422);
    expect(
      (await t.call(`/api/v1/devices/${id}`, { method: "PATCH", token: admin, body: { notes: "still Juniper" } }))
        .status,
    ).toBe(200);
  });

  it("PUT requires the create fields; PATCH validates what it gets", async () => {
    const { body } = await post(device("update-dev-02"));
    const put = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PUT",
      token: admin,
      body: { device_model: "x" },
    });
    expect(put.status).toBe(422);
    expect(put.body.errors).toHaveProperty("device_name");
    const patch = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_name: "x y" },
    });
    expect(patch.status).toBe(422);
  });

  it("renaming to another device's name (any case) is refused; keeping one's own name is fine", async () => {
    await post(device("Taken-Name-01"));
    const { body } = await post(device("rename-dev-01"));
    const clash = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_name: "TAKEN-name-01" },
    });
    expect(clash.status).toBe(422);
    const same = await t.call(`/api/v1/devices/${body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { device_name: "RENAME-dev-01" },
    });
    expect(same.status).toBe(200);
  });

  it("404 for an unknown id", async () => {
    expect(
      (await t.call("/api/v1/devices/987654", { method: "PATCH", token: admin, body: { notes: "x" } })).status,
    ).toBe(404);
    expect(
      (await t.call("/api/v1/devices/987654", { method: "PUT", token: admin, body: device("nobody-home") })).status,
    ).toBe(404);
  });
});

describe("delete, enable, disable", () => {
  it("disables, enables and deletes", async () => {
    const { body } = await post(device("lifecycle-01", { device_tags: ["lc"] }));
    const id = body.data.id;
    expect((await t.call(`/api/v1/devices/${id}/disable`, { method: "POST", token: admin })).body.data.enabled).toBe(
      false,
    );
    expect((await t.call(`/api/v1/devices/${id}/enable`, { method: "POST", token: admin })).body.data.enabled).toBe(
      true,
    );
    const del = await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token: admin });
    expect(del).toMatchObject({
      status: 200,
      body: { message: "Device deleted successfully!", detail: `Device ${id} deleted` },
    });
    expect((await t.call(`/api/v1/devices/${id}`, { token: admin })).status).toBe(404);
    expect((await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token: admin })).status).toBe(404);
  });
});

describe("profiles", () => {
  it("a device created with device_profile_id inherits the profile's defaults unless it sets them", async () => {
    const now = new Date();
    const categoryId = await seedRef(categories, "Profile Category");
    const templateId = await seedRef(templates, "profile-template", { code: "prompt: '#'" });
    const credId = await seedRef(credentials, "profile-creds");
    await t.db
      .insert(tags)
      .values({ name: "from-profile", nameKey: nameKey("from-profile"), createdAt: now, updatedAt: now });
    const [tag] = await t.db.select().from(tags).where(eq(tags.name, "from-profile"));
    const [profile] = await t.db
      .insert(deviceProfiles)
      .values({
        name: "Branch switch",
        nameKey: nameKey("Branch switch"),
        vendorId: 1,
        templateId,
        categoryId,
        credId,
        snippetCredId: credId,
        port: 2222,
        tagIds: [tag!.id],
        createdAt: now,
        updatedAt: now,
      })
      .returning();

    const inherited = await post(device("profile-dev-01", { device_profile_id: profile!.id }));
    expect(inherited.status).toBe(201);
    expect(inherited.body.data).toMatchObject({
      device_profile_id: profile!.id,
      device_vendor: "Cisco",
      device_template_id: templateId,
      device_category_id: categoryId,
      device_cred_id: credId,
      device_snippet_cred_id: credId,
      device_port_override: 2222,
      device_tags: ["from-profile"],
    });

    const overridden = await post(
      device("profile-dev-02", {
        device_profile_id: profile!.id,
        device_vendor: "Arista",
        device_port_override: 22,
        device_tags: ["own"],
        device_cred_id: 0,
      }),
    );
    expect(overridden.body.data).toMatchObject({
      device_vendor: "Arista",
      device_port_override: 22,
      device_tags: ["own"],
      device_cred_id: 0,
      device_category_id: categoryId,
    });
  });
});

describe("list: pagination, filters, sort, search, fields", () => {
  let l: TestContext;
  let token: string;
  beforeAll(async () => {
    l = await createTestContext();
    token = await l.token(["devices.read", "devices.write"]);
    const vendors = ["Cisco", "Juniper", "Arista"];
    const items = Array.from({ length: 30 }, (_, i) => ({
      device_name: `list-dev-${String(i).padStart(2, "0")}`,
      device_ip: `10.0.0.${i + 1}`,
      device_vendor: vendors[i % 3],
      device_model: i % 2 ? "M-odd" : "M-even",
      device_tags: i < 5 ? ["core"] : i < 10 ? ["edge", "core"] : ["access"],
      custom: { site: i % 2 ? "ams" : "fra" },
      enabled: i !== 29,
    }));
    const res = await l.call("/api/v1/devices/bulk", { method: "POST", token, body: { devices: items } });
    expect(res.status).toBe(201);
  });
  afterAll(() => l.close());

  const list = (query: string) => l.call(`/api/v1/devices${query}`, { token });

  it("paginates with the envelope, links and totals", async () => {
    const res = await list("?per_page=7&page=2");
    expect(res.status).toBe(200);
    expect(res.body.data.map((d: { device_name: string }) => d.device_name)).toEqual([
      "list-dev-07",
      "list-dev-08",
      "list-dev-09",
      "list-dev-10",
      "list-dev-11",
      "list-dev-12",
      "list-dev-13",
    ]);
    expect(res.body.meta).toEqual({ current_page: 2, per_page: 7, total: 30, last_page: 5, from: 8, to: 14 });
    const links = res.body.links;
    expect(new URL(links.first).searchParams.get("page")).toBe("1");
    expect(new URL(links.last).searchParams.get("page")).toBe("5");
    expect(new URL(links.prev).searchParams.get("page")).toBe("1");
    expect(new URL(links.next).searchParams.get("page")).toBe("3");
    expect(new URL(links.next).searchParams.get("per_page")).toBe("7");

    const last = await list("?per_page=7&page=5");
    expect(last.body.data).toHaveLength(2);
    expect(last.body.links.next).toBeNull();
    expect(last.body.meta).toMatchObject({ from: 29, to: 30 });

    const beyond = await list("?per_page=7&page=9");
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toMatchObject({ from: null, to: null, total: 30 });
  });

  it("defaults to 25 per page, accepts perPage, caps at 500", async () => {
    expect((await list("")).body.meta.per_page).toBe(25);
    expect((await list("?perPage=3")).body.data).toHaveLength(3);
    expect((await list("?per_page=501")).status).toBe(422);
    expect((await list("?page=0")).status).toBe(422);
    expect((await list("?page=abc")).body.errors.page).toEqual(["page must be a whole number"]);
  });

  it("filters by vendor, tags, model, status, enabled and custom attributes; commas mean OR", async () => {
    const names = async (q: string) =>
      (await list(`${q}&per_page=100`)).body.data.map((d: { device_name: string }) => d.device_name);
    expect(await names("?filter[device_vendor]=juniper")).toHaveLength(10);
    expect(await names("?filter[device_vendor]=Juniper,Arista")).toHaveLength(20);
    expect(await names("?filter[device_tags]=core")).toHaveLength(10);
    expect(await names("?filter[device_tags]=edge")).toHaveLength(5);
    expect(await names("?filter[device_model]=m-odd")).toHaveLength(15);
    expect(await names("?filter[status]=unknown")).toHaveLength(30);
    expect(await names("?filter[status]=up")).toHaveLength(0);
    expect(await names("?filter[enabled]=false")).toEqual(["list-dev-29"]);
    expect(await names("?filter[custom.site]=ams")).toHaveLength(15);
    expect(await names("?filter[custom.site]=ams&filter[device_vendor]=cisco")).toEqual([
      "list-dev-03",
      "list-dev-09",
      "list-dev-15",
      "list-dev-21",
      "list-dev-27",
    ]);
    const total = (await list("?filter[device_tags]=core&per_page=3")).body.meta.total;
    expect(total).toBe(10);
  });

  it("filters by category", async () => {
    const categoryId = (
      await l.db
        .insert(categories)
        .values({ name: "Firewalls", nameKey: nameKey("Firewalls"), createdAt: new Date(), updatedAt: new Date() })
        .returning()
    )[0]!.id;
    const first = (await list("?filter[device_name]=list-dev-00")).body.data[0];
    await l.call(`/api/v1/devices/${first.id}`, { method: "PATCH", token, body: { device_category_id: categoryId } });
    const res = await list(`?filter[device_category_id]=${categoryId}`);
    expect(res.body.data.map((d: { id: number }) => d.id)).toEqual([first.id]);
  });

  it("rejects unknown filter, sort and field names, and bad filter values, with 422", async () => {
    const bad = await list("?filter[colour]=red&sort=-weight&fields=id,secret");
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(["fields", "filter[colour]", "sort"]);
    expect(bad.body.errors["filter[colour]"][0]).toMatch(/device_vendor/);
    expect((await list("?filter[status]=sideways")).status).toBe(422);
    expect((await list("?filter[device_category_id]=abc")).status).toBe(422);
    expect((await list("?filter[custom.bad key]=1")).status).toBe(422);
  });

  it("sorts by one or more fields, '-' for descending, with id breaking ties", async () => {
    const res = await list("?sort=-device_name&per_page=3");
    expect(res.body.data.map((d: { device_name: string }) => d.device_name)).toEqual([
      "list-dev-29",
      "list-dev-28",
      "list-dev-27",
    ]);
    const multi = await list("?sort=device_vendor,-device_name&per_page=11");
    const got = multi.body.data.map(
      (d: { device_vendor: string; device_name: string }) => `${d.device_vendor}/${d.device_name}`,
    );
    expect(got.slice(0, 2)).toEqual(["Arista/list-dev-29", "Arista/list-dev-26"]);
    expect(got[10]).toBe("Cisco/list-dev-27");
  });

  it("returns only the requested fields", async () => {
    const res = await list("?fields=id,device_name&per_page=2");
    expect(Object.keys(res.body.data[0]).sort()).toEqual(["device_name", "id"]);
  });

  it("searches name, address, model, vendor and tag substrings; the search endpoint does the same", async () => {
    const total = async (q: string) => (await list(q)).body.meta.total;
    expect(await total("?search=dev-1")).toBe(10);
    expect(await total("?search=10.0.0.3")).toBe(2); // .3 and .30
    expect(await total("?search=ODD")).toBe(15);
    expect(await total("?search=arist")).toBe(10);
    expect(await total("?search=acces")).toBe(20);
    expect(await total("?search=100%25")).toBe(0); // % is literal
    const viaSearch = await l.call("/api/v1/devices/search?q=edg&per_page=2", { token });
    expect(viaSearch.status).toBe(200);
    expect(viaSearch.body.meta.total).toBe(5);
    expect((await l.call("/api/v1/devices/search", { token })).status).toBe(422);
  });
});

describe("bulk", () => {
  it("creates many in one request, in order", async () => {
    const res = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: { devices: [device("bulk-a-0001"), device("bulk-a-0002")] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((d: { device_name: string }) => d.device_name)).toEqual(["bulk-a-0001", "bulk-a-0002"]);
  });

  it("is all-or-nothing and names each failing item's index and field", async () => {
    const existing = await t.call("/api/v1/devices", { method: "POST", token: admin, body: device("bulk-existing-1") });
    expect(existing.status).toBe(201);
    const before = (await t.call("/api/v1/devices?per_page=1", { token: admin })).body.meta.total;
    const res = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: {
        devices: [
          device("bulk-b-0001"),
          device("bad"),
          device("bulk-b-0003", { device_vendor: "Nope" }),
          device("BULK-b-0001"),
        ],
      },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(["devices.1.device_name"]);
    const second = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: {
        devices: [
          device("bulk-b-0001"),
          device("bulk-b-0003", { device_vendor: "Nope" }),
          device("BULK-b-0001"),
          device("bulk-existing-1"),
        ],
      },
    });
    expect(second.status).toBe(422);
    expect(Object.keys(second.body.errors).sort()).toEqual([
      "devices.1.device_vendor",
      "devices.2.device_name",
      "devices.3.device_name",
    ]);
    expect((await t.call("/api/v1/devices?per_page=1", { token: admin })).body.meta.total).toBe(before);
    expect((await t.call("/api/v1/devices?filter[device_name]=bulk-b-0001", { token: admin })).body.data).toEqual([]);
  });

  it("accepts up to 1000 items and refuses 1001", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => device(`bulk-max-${i}`, { device_tags: ["bulk"] }));
    const ok = await t.call("/api/v1/devices/bulk", { method: "POST", token: admin, body: { devices: many } });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toHaveLength(1000);
    const tooMany = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: { devices: [...many, device("one-more")] },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors.devices[0]).toMatch(/at most 1000/);
  });

  it("updates, disables, enables and deletes many", async () => {
    const created = await t.call("/api/v1/devices/bulk", {
      method: "POST",
      token: admin,
      body: { devices: [device("bulk-c-0001"), device("bulk-c-0002")] },
    });
    const ids: number[] = created.body.data.map((d: { id: number }) => d.id);
    const upd = await t.call("/api/v1/devices/bulk", {
      method: "PATCH",
      token: admin,
      body: { devices: ids.map((id) => ({ id, device_model: "bulk-model" })) },
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.map((d: { device_model: string }) => d.device_model)).toEqual(["bulk-model", "bulk-model"]);

    const badUpd = await t.call("/api/v1/devices/bulk", {
      method: "PATCH",
      token: admin,
      body: {
        devices: [
          { id: ids[0], device_model: "zzz" },
          { id: 999999, device_model: "x" },
        ],
      },
    });
    expect(badUpd.status).toBe(422);
    expect(Object.keys(badUpd.body.errors)).toEqual(["devices.1.id"]);
    expect((await t.call(`/api/v1/devices/${ids[0]}`, { token: admin })).body.data.device_model).toBe("bulk-model");

    const dis = await t.call("/api/v1/devices/bulk/disable", { method: "POST", token: admin, body: { ids } });
    expect(dis.body.data.every((d: { enabled: boolean }) => !d.enabled)).toBe(true);
    const en = await t.call("/api/v1/devices/bulk/enable", { method: "POST", token: admin, body: { ids } });
    expect(en.body.data.every((d: { enabled: boolean }) => d.enabled)).toBe(true);

    const badDel = await t.call("/api/v1/devices/bulk", {
      method: "DELETE",
      token: admin,
      body: { ids: [...ids, 999999] },
    });
    expect(badDel.status).toBe(422);
    expect(Object.keys(badDel.body.errors)).toEqual(["ids.2"]);
    const del = await t.call("/api/v1/devices/bulk", { method: "DELETE", token: admin, body: { ids } });
    expect(del).toMatchObject({ status: 200, body: { message: "Deleted 2 devices" } });
    expect((await t.call(`/api/v1/devices/${ids[0]}`, { token: admin })).status).toBe(404);
  });
});

describe("scope", () => {
  let s: TestContext;
  let scoped: string;
  let scopedWriter: string;
  let outsideId: number;
  let insideId: number;
  beforeAll(async () => {
    s = await createTestContext();
    const root = await s.token();
    await s.role({ name: "core-team", tags: ["core"] });
    scoped = await s.token(["devices.read"], { role: "core-team" });
    scopedWriter = await s.token(["devices.read", "devices.write"], { role: "core-team" });
    const res = await s.call("/api/v1/devices/bulk", {
      method: "POST",
      token: root,
      body: {
        devices: [
          device("inside-0001", { device_tags: ["core"] }),
          device("inside-0002", { device_tags: ["core", "x"] }),
          device("outside-001", { device_tags: ["edge"] }),
          device("outside-002"),
        ],
      },
    });
    insideId = res.body.data[0].id;
    outsideId = res.body.data[2].id;
  });
  afterAll(() => s.close());

  it("lists only devices in scope, and counts only those", async () => {
    const res = await s.call("/api/v1/devices", { token: scoped });
    expect(res.body.data.map((d: { device_name: string }) => d.device_name)).toEqual(["inside-0001", "inside-0002"]);
    expect(res.body.meta.total).toBe(2);
    const searched = await s.call("/api/v1/devices/search?q=outside", { token: scoped });
    expect(searched.body.meta.total).toBe(0);
    const summary = await s.call("/api/v2/devices/summary", { token: scoped });
    expect(summary.body.data.total).toBe(2);
  });

  it("answers 404, not 403, for a device outside the scope, on every route", async () => {
    expect((await s.call(`/api/v1/devices/${insideId}`, { token: scoped })).status).toBe(200);
    const attempts = [
      s.call(`/api/v1/devices/${outsideId}`, { token: scoped }),
      s.call(`/api/v2/devices/${outsideId}`, { token: scoped }),
      s.call(`/api/v1/devices/${outsideId}`, { method: "PATCH", token: scopedWriter, body: { notes: "x" } }),
      s.call(`/api/v1/devices/${outsideId}`, { method: "PUT", token: scopedWriter, body: device("outside-001") }),
      s.call(`/api/v1/devices/${outsideId}`, { method: "DELETE", token: scopedWriter }),
      s.call(`/api/v1/devices/${outsideId}/disable`, { method: "POST", token: scopedWriter }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.message).toBe(`Device ${outsideId} not found`);
    }
    const bulk = await s.call("/api/v1/devices/bulk", {
      method: "DELETE",
      token: scopedWriter,
      body: { ids: [insideId, outsideId] },
    });
    expect(bulk.status).toBe(422);
    expect(bulk.body.errors["ids.1"][0]).toMatch(/not an existing device/);
  });

  it("refuses to create or move a device outside the writer's scope", async () => {
    const outside = await s.call("/api/v1/devices", {
      method: "POST",
      token: scopedWriter,
      body: device("new-outside-1", { device_tags: ["edge"] }),
    });
    expect(outside.status).toBe(422);
    expect(outside.body.errors.device_tags[0]).toMatch(/outside your scope/);
    const inside = await s.call("/api/v1/devices", {
      method: "POST",
      token: scopedWriter,
      body: device("new-inside-1", { device_tags: ["core"] }),
    });
    expect(inside.status).toBe(201);
    const away = await s.call(`/api/v1/devices/${inside.body.data.id}`, {
      method: "PATCH",
      token: scopedWriter,
      body: { device_tags: ["edge"] },
    });
    expect(away.status).toBe(422);
    // The scope's list is the one the other tests read: what this test added goes.
    const removed = await s.call(`/api/v1/devices/${inside.body.data.id}`, { method: "DELETE", token: scopedWriter });
    expect(removed.status).toBeLessThan(300);
  });

  it("scopes by category as well as by tag", async () => {
    const root = await s.token();
    const [cat] = await s.db
      .insert(categories)
      .values({ name: "Scoped Cat", nameKey: nameKey("Scoped Cat"), createdAt: new Date(), updatedAt: new Date() })
      .returning();
    await s.role({ name: "cat-team", categoryIds: [cat!.id] });
    const token = await s.token(["devices.read"], { role: "cat-team" });
    const created = await s.call("/api/v1/devices", {
      method: "POST",
      token: root,
      body: device("in-category-1", { device_category_id: cat!.id }),
    });
    const res = await s.call("/api/v1/devices", { token });
    expect(res.body.data.map((d: { id: number }) => d.id)).toEqual([created.body.data.id]);
  });
});

describe("summary (v2)", () => {
  it("counts devices by state", async () => {
    const x = await createTestContext();
    try {
      const token = await x.token();
      await x.call("/api/v1/devices/bulk", {
        method: "POST",
        token,
        body: { devices: [device("sum-dev-01"), device("sum-dev-02"), device("sum-dev-03", { enabled: false })] },
      });
      const backedUp = new Date("2026-05-01T10:00:00Z");
      await x.db.update(devices).set({ status: "up", lastBackupAt: backedUp }).where(eq(devices.name, "sum-dev-01"));
      await x.db.update(devices).set({ status: "unreachable" }).where(eq(devices.name, "sum-dev-02"));
      const res = await x.call("/api/v2/devices/summary", { token });
      // rConfig's figures are beside these (docs/rconfig.md).
      expect(res.body.data).toMatchObject({
        total: 3,
        up: 1,
        unreachable: 1,
        unknown: 0,
        disabled: 1,
        never_backed_up: 2,
        last_backup_at: backedUp.toISOString(),
      });
      expect((await x.call("/api/v1/devices/summary", { token })).status).toBe(404); // v2 only: src/adapters/api/other-version-only.ts
    } finally {
      await x.close();
    }
  });
});

describe("activity log", () => {
  it("records every write with actor, token, action, record and changed fields", async () => {
    const userToken = await t.token(["devices.read", "devices.write"]);
    const { body } = await post(device("audited-dev-01", { device_model: "A" }), userToken);
    const id = body.data.id;
    await t.call(`/api/v1/devices/${id}`, {
      method: "PATCH",
      token: userToken,
      body: { device_model: "B", device_password: "zz-secret-zz" },
    });
    await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token: userToken });
    const rows = await t.db
      .select()
      .from(activityLog)
      .where(sql`${activityLog.subjectType} = 'device' and ${activityLog.subjectId} = ${id}`)
      .orderBy(activityLog.id);
    expect(rows.map((r) => r.action)).toEqual(["device.create", "device.update", "device.delete"]);
    expect(rows[0]!.tokenName).toMatch(/^test token/);
    expect(rows[0]!.username).toMatch(/^user/);
    expect(rows[1]!.changes).toEqual({
      device_model: { old: "A", new: "B" },
      has_password: { old: false, new: true },
      device_password: { old: "[hidden]", new: "[changed]" },
    });
    expect(JSON.stringify(rows)).not.toContain("zz-secret-zz");
  });
});
