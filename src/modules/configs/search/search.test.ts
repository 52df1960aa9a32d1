import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import {
  categories,
  configSearchCommonGrams,
  configSearchDocs,
  deviceTags,
  devices,
  tags,
  vendors,
} from "../../../db/schema/index.ts";
import { storeConfig } from "../storage/store.ts";
import { reindexAllConfigs } from "./search-reindex.ts";
import { indexPendingVersions } from "./search-index.ts";
import { regexLiterals } from "./search-literals.ts";
import { addCommonGrams, commonGrams, NO_COMMON_GRAMS } from "./search-common-grams.ts";
import { gramDocument } from "./search-grams.ts";
import { clearLineStore, lineStoreSettled } from "./line-store.ts";
import { mulberry32 } from "../../../kernel/random.ts";
import { nameKey } from "../../../db/name-key.ts";

const rnd = mulberry32(42);
const int = (n: number) => Math.floor(rnd() * n);
const pick = <T>(items: readonly T[]) => items[int(items.length)]!;

const WORDS = [
  "uplink",
  "Uplink",
  "UPLINK",
  "Zürich-Büro",
  "ÜBER",
  "core",
  "Core-Switch",
  "printer",
  "camera",
  "backup",
  "[lab] (spare)",
  "a.b*c",
  "voice",
  "guest",
];
const LINE_MAKERS: (() => string[])[] = [
  () => [
    `interface GigabitEthernet1/0/${1 + int(48)}`,
    ` description ${pick(WORDS)} ${pick(WORDS)}`,
    ` switchport access vlan ${10 + int(200)}`,
    ...(int(3) ? [] : [" shutdown"]),
    "!",
  ],
  () => [
    `ip access-list extended ACL-${pick(["IN", "OUT", "Mgmt", "mgmt"])}`,
    ...Array.from(
      { length: 1 + int(4) },
      (_, i) =>
        ` ${(i + 1) * 10} ${pick(["permit", "deny"])} ${pick(["tcp", "udp"])} host 10.${int(4)}.${int(20)}.${int(250)} any eq ${pick([22, 53, 443, 8080])}`,
    ),
    "!",
  ],
  () => ["router ospf 1", ` network 10.${int(6)}.0.0 0.0.255.255 area ${int(3)}`, "!"],
  () => [`snmp-server community ${pick(["public", "Secret-RO", "n3tk33p"])} RO`],
  () => [`ntp server 10.255.${int(3)}.${int(30)}`],
  () => [`logging host 192.0.2.${int(40)}`],
];

function makeConfig(name: string): string[] {
  const lines = [`hostname ${name}`, "!"];
  for (let i = 0; i < 8 + int(10); i++) lines.push(...pick(LINE_MAKERS)());
  lines.push("end");
  return lines;
}

/** A small realistic edit: change, add or remove lines. */
function edit(lines: string[]): string[] {
  const out = [...lines];
  for (let e = 0; e < 1 + int(3); e++) {
    const at = 2 + int(out.length - 3);
    const kind = int(3);
    if (kind === 0) out.splice(at, 0, ...pick(LINE_MAKERS)());
    else if (kind === 1) out.splice(at, 1);
    else out[at] = ` description ${pick(WORDS)} changed ${int(1000)}`;
  }
  return out;
}

type Stored = {
  id: number;
  deviceId: number;
  deviceName: string;
  command: string;
  version: number;
  text: string;
  firstSeen: Date;
  lastSeen: Date;
};
type Device = { id: number; name: string; tags: string[]; categoryId: number | null; vendor: string | null };

let t: TestContext;
let token: string;
const stored: Stored[] = [];
const deviceList: Device[] = [];
// The third command's quote, backslash and non-ASCII letter must name its series the same in SQL and in
// TypeScript (search.ts's seriesMatching builds the series' keys with json_array).
const COMMANDS = ["show running-config", "show version", 'show "vlan" \\ brief Zürich'];
const day = (n: number) => new Date(Date.UTC(2026, 0, n));

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  const now = day(1);
  const [lab] = await t.db
    .insert(categories)
    .values({ name: "Lab", nameKey: nameKey("Lab"), createdAt: now, updatedAt: now })
    .returning({ id: categories.id });
  const [def] = await t.db.select({ id: categories.id }).from(categories).where(eq(categories.name, "Default"));
  const vendorRows = await t.db.select({ id: vendors.id, name: vendors.name }).from(vendors).limit(2);
  const tagRows = await t.db
    .insert(tags)
    .values(
      ["core", "edge", "branch"].map((name) => ({ name, nameKey: nameKey(name), createdAt: now, updatedAt: now })),
    )
    .returning({ id: tags.id, name: tags.name });

  for (let d = 0; d < 14; d++) {
    const name = `${pick(["ams", "Fra", "lon"])}-sw-${String(d).padStart(2, "0")}`;
    const categoryId = d % 3 === 0 ? lab!.id : d % 3 === 1 ? def!.id : null;
    const vendor = d % 4 === 3 ? null : vendorRows[d % 2]!;
    const [row] = await t.db
      .insert(devices)
      .values({
        name,
        nameKey: nameKey(name),
        ip: `192.0.2.${d + 1}`,
        categoryId,
        vendorId: vendor?.id ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: devices.id });
    const deviceTagNames = tagRows.filter((_, i) => (d >> i) & 1);
    if (deviceTagNames.length)
      await t.db.insert(deviceTags).values(deviceTagNames.map((tag) => ({ deviceId: row!.id, tagId: tag.id })));
    deviceList.push({
      id: row!.id,
      name,
      tags: deviceTagNames.map((x) => x.name),
      categoryId,
      vendor: vendor?.name ?? null,
    });
  }
  // Versions arrive over days, interleaved across devices, as a collector would store them.
  const histories = new Map<string, string[]>();
  for (let round = 0; round < 5; round++) {
    for (const device of deviceList) {
      for (const command of COMMANDS) {
        if (command === "show version" && device.id % 2) continue;
        const key = `${device.id}/${command}`;
        const previous = histories.get(key);
        if (previous && int(4) === 0) continue; // no change this round
        const lines = previous ? edit(previous) : makeConfig(device.name);
        histories.set(key, lines);
        const text = lines.join("\n") + "\n";
        const when = day(2 + round * 3);
        const res = await storeConfig(t.db, {
          deviceId: device.id,
          command,
          text,
          significant: (s) => s,
          trigger: "schedule",
          jobId: null,
          now: when,
        });
        if (res.changed)
          stored.push({
            id: res.configId,
            deviceId: device.id,
            deviceName: device.name,
            command,
            version: res.version,
            text,
            firstSeen: when,
            lastSeen: when,
          });
        else stored.find((s) => s.id === res.configId)!.lastSeen = when;
      }
    }
  }
  // The fleet every test reads, indexed; a test that needs versions queued or the index gone makes that itself.
  while ((await indexPendingVersions(t.db, 100)).taken);
});
afterAll(() => t?.close());

type Query = {
  terms: string[];
  match?: "all" | "any";
  regex?: boolean;
  case_sensitive?: boolean;
  latest_only?: boolean;
  context_before?: number;
  context_after?: number;
  filter?: {
    device_id?: number[];
    device_name?: string[];
    device_category_id?: number[];
    device_tags?: string[];
    device_vendor?: string[];
    command?: string[];
    date_from?: string[];
    date_to?: string[];
  };
};

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The answer worked out the slow, obvious way: every version's every line. */
function reference(q: Query, visible: (d: Device) => boolean = () => true) {
  const latestVersion = new Map<string, number>();
  for (const s of stored)
    latestVersion.set(
      `${s.deviceId}/${s.command}`,
      Math.max(latestVersion.get(`${s.deviceId}/${s.command}`) ?? 0, s.version),
    );
  const flags = q.case_sensitive ? "" : "i";
  const tests = q.terms.map((term) =>
    q.regex
      ? (line: string) => new RegExp(term, flags).test(line)
      : q.case_sensitive
        ? (line: string) => line.includes(term)
        : (line: string) => line.toLowerCase().includes(term.toLowerCase()),
  );
  const f = q.filter ?? {};
  const out = [];
  const rows = stored
    .filter((s) => {
      const device = deviceList.find((d) => d.id === s.deviceId)!;
      const latest = latestVersion.get(`${s.deviceId}/${s.command}`) === s.version;
      return (
        visible(device) &&
        (q.latest_only === false || latest) &&
        (!f.device_id || f.device_id.includes(device.id)) &&
        (!f.device_category_id || (device.categoryId !== null && f.device_category_id.includes(device.categoryId))) &&
        (!f.device_tags || device.tags.some((x) => f.device_tags!.includes(x))) &&
        (!f.device_vendor ||
          (device.vendor !== null &&
            f.device_vendor.map((v) => v.toLowerCase()).includes(device.vendor.toLowerCase()))) &&
        (!f.command || f.command.includes(s.command)) &&
        (!f.device_name || f.device_name.map((n) => n.toLowerCase()).includes(device.name.toLowerCase())) &&
        (!f.date_from || s.firstSeen >= new Date(f.date_from[0]!)) &&
        (!f.date_to || s.firstSeen <= new Date(f.date_to[0]!))
      );
    })
    .sort(
      (a, b) =>
        compare(a.deviceName.toLowerCase(), b.deviceName.toLowerCase()) ||
        a.deviceId - b.deviceId ||
        compare(a.command, b.command) ||
        b.version - a.version,
    );
  for (const s of rows) {
    const lines = s.text.slice(0, -1).split("\n");
    const matches = [];
    const found = new Set<number>();
    for (let i = 0; i < lines.length; i++) {
      const which = tests.flatMap((test, k) => (test(lines[i]!) ? [k] : []));
      if (!which.length) continue;
      which.forEach((k) => found.add(k));
      const ctx = (from: number, to: number) => {
        const list = [];
        for (let j = Math.max(0, from); j < Math.min(lines.length, to); j++)
          list.push({ line_number: j + 1, line: lines[j] });
        return list;
      };
      matches.push({
        line_number: i + 1,
        line: lines[i],
        terms: which,
        before: ctx(i - (q.context_before ?? 0), i),
        after: ctx(i + 1, i + 1 + (q.context_after ?? 0)),
      });
    }
    if (!matches.length || ((q.match ?? "all") === "all" && found.size < q.terms.length)) continue;
    out.push({
      config_id: s.id,
      device_id: s.deviceId,
      device_name: s.deviceName,
      command: s.command,
      version: s.version,
      latest: latestVersion.get(`${s.deviceId}/${s.command}`) === s.version,
      first_seen_at: s.firstSeen.toISOString(),
      last_seen_at: s.lastSeen.toISOString(),
      match_count: matches.length,
      matches,
    });
  }
  return out;
}

const search = (q: Query, as = token, path = "/api/v1/configs/search") =>
  t.call(path, { method: "POST", token: as, body: { per_page: 500, ...q } });

/** Substrings of stored lines, in random case, from 1 to 14 characters. */
function sampleTerm(): string {
  const s = pick(stored);
  const line = pick(s.text.split("\n").filter(Boolean));
  const start = int(line.length);
  const text = line.slice(start, start + 1 + int(14));
  return int(3) ? text : text.toUpperCase();
}

/** Random plain-term searches whose answers differ from the reference's. */
async function plainTermFailures(count: number): Promise<string[]> {
  const failures: string[] = [];
  for (let i = 0; i < count; i++) {
    const q: Query = {
      terms: Array.from({ length: 1 + int(2) }, sampleTerm),
      match: pick(["all", "any"] as const),
      case_sensitive: rnd() < 0.3,
      latest_only: rnd() < 0.5,
      context_before: pick([0, 1, 3]),
      context_after: pick([0, 2, 50]),
    };
    const res = await search(q);
    if (res.status !== 200) failures.push(`${JSON.stringify(q)} -> ${res.status} ${JSON.stringify(res.body)}`);
    else if (JSON.stringify(res.body.data) !== JSON.stringify(reference(q))) failures.push(JSON.stringify(q));
  }
  return failures;
}

/** Regular-expression searches whose answers differ from the reference's. */
async function patternFailures(): Promise<string[]> {
  const patterns = [
    String.raw`^interface GigabitEthernet1/0/1\d$`,
    String.raw`permit (tcp|udp) host 10\.1\.`,
    String.raw`desc.*uplink`,
    String.raw`\d+\.\d+\.\d+\.\d+ any eq 443`,
    String.raw`(?:deny|permit) udp`,
    String.raw`access vlan 1[0-9]{2}$`,
    String.raw`x?y?z?e`,
    String.raw`ACL-(IN|OUT)`,
    String.raw`\[lab\] \(spare\)`,
    String.raw`a\.b\*c`,
    String.raw`snmp-server community \S+ RO`,
    String.raw`ntp server 10\.255\.[^0]`,
    String.raw`(vo)+ice`,
    String.raw`Core-Sw(itch)?`,
    String.raw`^ \d0 deny`,
    String.raw`ho(s)t`,
    // Anchors see only the line: at its end there is nothing, not the next line.
    String.raw`uplink$`,
    String.raw`^interface`,
    String.raw`shutdown$`,
  ];
  const failures: string[] = [];
  for (const pattern of patterns) {
    for (const variant of [
      {},
      { case_sensitive: true },
      { latest_only: false, context_before: 2, context_after: 1 },
    ] as Partial<Query>[]) {
      const q: Query = { terms: [pattern], regex: true, ...variant };
      const res = await search(q);
      if (res.status !== 200) failures.push(`${pattern} -> ${res.status} ${res.body.message}`);
      else if (JSON.stringify(res.body.data) !== JSON.stringify(reference(q))) failures.push(JSON.stringify(q));
    }
  }
  return failures;
}

describe("configuration search", () => {
  it("stores enough history to tell latest from all versions", () => {
    expect(stored.length).toBeGreaterThan(40);
    expect(new Set(stored.map((s) => `${s.deviceId}/${s.command}`)).size).toBeLessThan(stored.length);
  });

  it("finds versions still queued for the index, and finds the same while and after they are indexed", async () => {
    const queued = async () =>
      Number((await t.db.all<{ n: number }>(sql`select count(*) as n from config_search_pending`))[0]!.n);
    // Every version queued and none indexed, as storing leaves them.
    await t.db.delete(configSearchDocs);
    await t.db.run(
      sql`insert into config_search_pending (config_id, device_id, command) select id, device_id, command from configs`,
    );
    expect(await queued()).toBe(stored.length);
    const rare = { terms: ["Secret-RO"], latest_only: false };
    // Every series has a queued version: each is a candidate, read and checked.
    expect((await search(rare)).body.search).toEqual({ index_used: true, configs_checked: stored.length });
    expect(await plainTermFailures(30)).toEqual([]);
    // Oldest first, a few at a time, as a collector does between downloads: half indexed is still whole.
    let batches = 0;
    while ((await indexPendingVersions(t.db, Math.ceil(stored.length / 5))).taken) {
      batches++;
      expect(await plainTermFailures(6)).toEqual([]);
      expect(await patternFailures()).toEqual([]);
    }
    expect(batches).toBe(5);
    expect(await queued()).toBe(0);
    const docs = await t.db.all<{ n: number; versions: number }>(
      sql`select count(*) as n, count(distinct config_id) as versions from config_search_docs`,
    );
    expect(docs.map((d) => [Number(d.n), Number(d.versions)])).toEqual([[stored.length, stored.length]]);
  });

  it("finds exactly what a line-by-line scan finds, for plain terms of every length, case and mode", async () => {
    expect(await plainTermFailures(60)).toEqual([]);
  });

  it("finds exactly what a line-by-line scan finds for regular expressions", async () => {
    const both: Query = { terms: ["uplink", String.raw`vlan \d+`], regex: true, match: "all", latest_only: false };
    expect((await search(both)).body.data).toEqual(reference(both));
    expect(await patternFailures()).toEqual([]);
  });

  it("applies every filter as the reference does", async () => {
    const lab = deviceList.find((d) => d.categoryId !== null)!.categoryId!;
    const vendor = deviceList.find((d) => d.vendor)!.vendor!;
    const filters: Query["filter"][] = [
      { device_id: [deviceList[1]!.id, deviceList[4]!.id] },
      { device_category_id: [lab] },
      { device_tags: ["core", "branch"] },
      { device_vendor: [vendor.toUpperCase()] },
      { command: ["show version"] },
      { device_name: [deviceList[2]!.name.toUpperCase(), deviceList[5]!.name] },
      { date_from: [day(8).toISOString()] },
      { date_to: [day(5).toISOString()] },
      { date_from: [day(5).toISOString()], date_to: [day(11).toISOString()], device_tags: ["edge"] },
    ];
    for (const filter of filters) {
      for (const latest_only of [true, false]) {
        const q: Query = { terms: ["e"], filter, latest_only };
        const res = await search(q);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.data, JSON.stringify(q)).toEqual(reference(q));
      }
    }
  });

  it("answers GET with the same results as POST, paginated by configuration", async () => {
    const q: Query = {
      terms: ["permit", "host 10.1"],
      match: "any",
      latest_only: false,
      context_before: 1,
      context_after: 1,
    };
    const expected = reference(q);
    expect(expected.length).toBeGreaterThan(6);
    const pages = [];
    for (let page = 1; page <= Math.ceil(expected.length / 4); page++) {
      const res = await t.call(
        `/api/v2/configs/search?q=permit&q=host%2010.1&match=any&latest_only=false&context=1&per_page=4&page=${page}`,
        { token },
      );
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({ current_page: page, per_page: 4, total: expected.length });
      pages.push(...res.body.data);
    }
    expect(pages).toEqual(expected);
    const filtered = await t.call(
      `/api/v1/configs/search?q=vlan&filter[device_tags]=core,edge&filter[command]=show%20running-config`,
      { token },
    );
    expect(filtered.body.data).toEqual(
      reference({ terms: ["vlan"], filter: { device_tags: ["core", "edge"], command: ["show running-config"] } }).slice(
        0,
        25,
      ),
    );
  });

  it("uses the index for terms with three or more characters, and scans otherwise", async () => {
    const rare = stored.find((s) => s.text.includes("Secret-RO"));
    const narrow = await search({ terms: ["Secret-RO"], latest_only: false });
    expect(narrow.body.search.index_used).toBe(true);
    expect(narrow.body.search.configs_checked).toBeLessThan(stored.length);
    expect(narrow.body.data.length > 0).toBe(Boolean(rare));
    const short = await search({ terms: ["vo"], latest_only: false });
    expect(short.body.search).toEqual({ index_used: false, configs_checked: stored.length });
    const patternWithoutLiteral = await search({ terms: [String.raw`\d{3}`], regex: true });
    expect(patternWithoutLiteral.body.search.index_used).toBe(false);
  });

  it("limits the matches listed per configuration but counts them all", async () => {
    const q: Query = { terms: ["!"], latest_only: true };
    const res = await t.call("/api/v1/configs/search", {
      method: "POST",
      token,
      body: { ...q, max_matches: 2, per_page: 500 },
    });
    const expected = reference(q);
    expect(res.body.data.map((h: { match_count: number }) => h.match_count)).toEqual(
      expected.map((h) => h.match_count),
    );
    expect(res.body.data.map((h: { matches: unknown[] }) => h.matches)).toEqual(
      expected.map((h) => h.matches.slice(0, 2)),
    );
  });

  it("rejects a regular expression that does not compile, naming the term", async () => {
    const res = await search({ terms: ["fine", "permit (tcp"], regex: true });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty(["terms.1"]);
    expect(res.body.message).toMatch(/terms\.1 is not a valid regular expression/);
    const get = await t.call("/api/v1/configs/search?q=%5Bunclosed&regex=true", { token });
    expect(get.status).toBe(422);
    expect(get.body.message).toMatch(/^q is not a valid regular expression/);
  });

  it("runs patterns in RE2: what it lacks is a 422 saying so, and RE2's own syntax works", async () => {
    const res = await search({ terms: ["description", "description (?!uplink)"], regex: true });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty(["terms.1"]);
    expect(res.body.message).toMatch(
      /terms\.1 uses lookahead \(\(\?!\.\.\.\)\), which RE2, the engine that runs patterns, lacks/,
    );
    const q: Query = { terms: ["(?i)UPLINK [[:alpha:]]"], regex: true, case_sensitive: true, latest_only: false };
    const inline = await search(q);
    expect(inline.status).toBe(200);
    expect(inline.body.data).toEqual(reference({ ...q, terms: ["uplink [a-z]"], case_sensitive: false }));
    expect(inline.body.data.length).toBeGreaterThan(0);
  });

  it("rejects bad input with a message saying what to fix", async () => {
    for (const [body, field] of [
      [{ terms: [] }, "terms"],
      [{ terms: ["x"], context_before: 51 }, "context_before"],
      [{ terms: ["x"], filter: { device_colour: ["red"] } }, "filter"],
      [{ terms: ["x"], filter: { date_from: ["yesterday"] } }, "filter[date_from]"],
      [{ terms: ["x"], surprise: true }, "body"],
    ] as const) {
      const res = await t.call("/api/v1/configs/search", { method: "POST", token, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body.errors).join(" "), JSON.stringify(res.body)).toContain(field);
    }
    const unknown = await t.call("/api/v1/configs/search?q=vlan&filter[colour]=red", { token });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toHaveProperty(["filter[colour]"]);
    const missing = await t.call("/api/v1/configs/search", { token });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.q).toEqual(["q is required: the text to look for"]);
    const tooMany = await t.call(
      `/api/v1/configs/search?${Array.from({ length: 11 }, (_, i) => `q=term${i}`).join("&")}`,
      { token },
    );
    expect(tooMany.body.errors.q).toEqual(["q must be at most 10 terms"]);
  });

  it("shows only devices in the token owner's scope", async () => {
    await t.role({ name: "core-viewers", permissions: ["configs.read"], tags: ["core"] });
    const scoped = await t.token(["configs.read"], { role: "core-viewers" });
    const inScope = (d: Device) => d.tags.includes("core");
    for (const q of [
      { terms: ["interface"], latest_only: false },
      { terms: ["e"], match: "any" as const },
      { terms: [String.raw`\d`], regex: true },
    ]) {
      const res = await search(q, scoped);
      expect(res.body.data).toEqual(reference(q, inScope));
      expect(res.body.data.length).toBeLessThan(reference(q).length);
    }
    const outside = deviceList.find((d) => !inScope(d))!;
    const filtered = await search({ terms: ["hostname"], filter: { device_id: [outside.id] } }, scoped);
    expect(filtered.body).toMatchObject({ data: [], meta: { total: 0 } });
  });

  it("keeps finding everything after the index is rebuilt from the stored versions", async () => {
    const q: Query = { terms: ["uplink"], latest_only: false };
    await t.db.delete(configSearchDocs);
    expect((await search(q)).body.data).toEqual([]);
    const rebuilt = await reindexAllConfigs(t.db);
    expect(rebuilt.versions).toBe(stored.length);
    expect((await search(q)).body.data).toEqual(reference(q));
  });

  it("drops a deleted device's index documents with it", async () => {
    const name = "doomed-sw";
    const [victim] = await t.db
      .insert(devices)
      .values({ name, nameKey: nameKey(name), ip: "192.0.2.99", createdAt: day(1), updatedAt: day(1) })
      .returning({ id: devices.id });
    for (const [n, word] of [
      [1, "farewell"],
      [2, "adieu"],
    ] as const)
      await storeConfig(t.db, {
        deviceId: victim!.id,
        command: "show running-config",
        text: `hostname ${name}\n snmp-server location ${word}-doomed\nend\n`,
        significant: (x) => x,
        trigger: "schedule",
        jobId: null,
        now: day(20 + n),
      });
    while ((await indexPendingVersions(t.db, 100)).taken);
    const docs = async () =>
      (
        await t.db.all<{ n: number }>(sql`select count(*) as n from config_search_docs where device_id = ${victim!.id}`)
      )[0]!.n;
    const indexRows = async () => (await t.db.all<{ n: number }>(sql`select count(*) as n from config_search`))[0]!.n;
    const before = await indexRows();
    expect(await docs()).toBe(2);
    expect((await search({ terms: ["-doomed"], latest_only: false })).body.data).toHaveLength(2);
    await t.db.delete(devices).where(eq(devices.id, victim!.id));
    expect(await docs()).toBe(0);
    expect(await indexRows()).toBeLessThan(before);
    expect((await search({ terms: ["-doomed"], latest_only: false })).body.data).toEqual([]);
    const q: Query = { terms: ["hostname"], latest_only: false };
    expect((await search(q)).body.data).toEqual(reference(q));
  });
});

describe("search with common index tokens left out", () => {
  // Tokens of lines nearly every configuration here has, as maintenance would find them in a large installation.
  const commonLines = [
    "interface GigabitEthernet1/0/1",
    " switchport access vlan 1",
    "logging host 192.0.2.1",
    "snmp-server community public RO",
    " description uplink",
  ];
  const tokens = gramDocument(commonLines, NO_COMMON_GRAMS).split(" ");

  beforeAll(async () => {
    expect(await addCommonGrams(t.db, tokens)).toBe(new Set(tokens).size);
    await reindexAllConfigs(t.db);
  });
  // The other tests read the fleet with no common tokens: the list goes, and the documents are whole again.
  afterAll(async () => {
    await t.db.delete(configSearchCommonGrams);
    await reindexAllConfigs(t.db);
  });

  it("leaves them out of every document", async () => {
    await t.db.transaction(async (tx) => {
      await tx.run(sql`create virtual table temp.vocab using fts5vocab(main, config_search, row)`);
      const held = await tx.all<{ n: number }>(
        sql`select count(*) as n from temp.vocab where term in (select value from json_each(${JSON.stringify(tokens)}))`,
      );
      await tx.run(sql`drop table temp.vocab`);
      expect(Number(held[0]!.n)).toBe(0);
    });
  });

  it("still finds exactly what a line-by-line scan finds", async () => {
    expect(await plainTermFailures(60)).toEqual([]);
    expect(await patternFailures()).toEqual([]);
    for (const terms of [["logging host 192.0.2"], ["log"], ["GigabitEthernet1/0/1", "uplink"], ["vlan 1"]]) {
      for (const latest_only of [true, false]) {
        const q: Query = { terms, latest_only };
        const res = await search(q);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.data, JSON.stringify(q)).toEqual(reference(q));
      }
    }
  });

  it("searches a term made only of common tokens among every configuration, within the larger limit", async () => {
    const res = await search({ terms: ["logging host 192.0.2"], latest_only: false });
    expect(res.body.search).toEqual({ index_used: false, configs_checked: stored.length });
  });

  it("never shrinks the list, and adds only what is new", async () => {
    expect(await addCommonGrams(t.db, tokens.slice(0, 3))).toBe(0);
    expect((await commonGrams(t.db)).count).toBe(new Set(tokens).size);
  });
});

describe("the literals a regular expression needs", () => {
  it("keeps only runs every match must contain", () => {
    expect(regexLiterals(String.raw`permit (tcp|udp) host 10\.1\.`)).toEqual([
      ["permit ", "tcp", " host 10.1."],
      ["permit ", "udp", " host 10.1."],
    ]);
    expect(regexLiterals("interface (Gig|Ten)abitEthernet")).toEqual([
      ["interface ", "Gig", "abitEthernet"],
      ["interface ", "Ten", "abitEthernet"],
    ]);
    expect(regexLiterals("ab?cdef")).toEqual([["cdef"]]);
    expect(regexLiterals("abc+d")).toEqual([["abc"]]);
    expect(regexLiterals("foo|ba")).toBeNull();
    expect(regexLiterals(String.raw`\d+\.\d+`)).toBeNull();
    expect(regexLiterals("(?:vlan)? 100")).toEqual([[" 100"]]);
    expect(regexLiterals("(?:vlan)?10")).toBeNull();
    expect(regexLiterals("(?P<name>abc)def")).toEqual([["abc", "def"]]);
    expect(regexLiterals(String.raw`\cJabc`)).toEqual([["abc"]]);
    expect(regexLiterals("[abc]def{2}")).toEqual([["def"]]);
  });

  it("reads RE2's additions, and leaves the index out when inline flags or quoting change what text means", () => {
    expect(regexLiterals(String.raw`vlan[[:digit:]]+ name`)).toEqual([["vlan", " name"]]);
    expect(regexLiterals(String.raw`\Ahostname \pL+\z`)).toEqual([["hostname "]]);
    expect(regexLiterals(String.raw`\p{Greek}abc\x{41}def`)).toEqual([["abc", "def"]]);
    expect(regexLiterals("(?s:abc)def")).toEqual([["abc", "def"]]);
    expect(regexLiterals("(?i)abc")).toBeNull();
    expect(regexLiterals("x(?i:abc)")).toBeNull();
    expect(regexLiterals(String.raw`\Qa.b*c\E`)).toBeNull();
  });

  it("drops alternatives that demand all another one does and more", () => {
    expect(regexLiterals(String.raw`host 10\.1\.[0-9]+ eq (22|443)$`)).toEqual([["host 10.1.", " eq "]]);
    expect(regexLiterals("(abc|abc)def")).toEqual([["abc", "def"]]);
    expect(regexLiterals("(abc|xyz)(def)?")).toEqual([["abc"], ["xyz"]]);
  });
});

describe("search's line store", () => {
  let c: TestContext;
  let cToken: string;
  /** Every version of one device holding the term: a test reads its own device's versions only. */
  const history = (term: string, deviceId: number) =>
    c.call("/api/v1/configs/search", {
      method: "POST",
      token: cToken,
      body: { terms: [term], latest_only: false, filter: { device_id: [deviceId] } },
    });
  const found = (body: { data: { version: number; matches: { line: string }[] }[] }) =>
    body.data.map((h) => [h.version, h.matches.map((m) => m.line)]);
  /** A device of the test's own, and how to store its versions. */
  async function ownDevice(name: string) {
    const [row] = await c.db
      .insert(devices)
      .values({ name, nameKey: nameKey(name), ip: "192.0.2.200", createdAt: day(1), updatedAt: day(1) })
      .returning({ id: devices.id });
    const deviceId = row!.id;
    const store = (text: string, n: number) =>
      storeConfig(c.db, {
        deviceId,
        command: "show running-config",
        text,
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: day(n),
      });
    return { deviceId, store };
  }

  beforeAll(async () => {
    c = await createTestContext();
    cToken = await c.token();
    clearLineStore();
  });
  afterAll(() => c?.close());

  const base = Array.from({ length: 40 }, (_, i) => `interface Gi0/${i}\n description port ${i}`).join("\n");

  it("reads a version stored whole and later turned into a delta right, from memory and from the database", async () => {
    const { deviceId, store } = await ownDevice("delta-sw");
    await store(`${base}\n snmp-server location needle-one\n`, 2);
    expect(found((await history("needle-", deviceId)).body)).toEqual([[1, [" snmp-server location needle-one"]]]);
    await lineStoreSettled();
    // Version 1 is read from memory as the whole text it was; in the database it is now a delta against version 2.
    await store(`${base}\n snmp-server location needle-two\n`, 3);
    const expected = [
      [2, [" snmp-server location needle-two"]],
      [1, [" snmp-server location needle-one"]],
    ];
    const [encoding] = await c.db.all<{ encoding: string }>(
      sql`select b.encoding from config_blobs b join configs v on v.blob_hash = b.hash where v.device_id = ${deviceId} and v.version = 1`,
    );
    expect(encoding!.encoding).toBe("delta");
    expect(found((await history("needle-", deviceId)).body)).toEqual(expected);
    clearLineStore();
    expect(found((await history("needle-", deviceId)).body)).toEqual(expected);
  });

  it("answers a repeated search without reading the texts again", async () => {
    const { deviceId, store } = await ownDevice("repeat-sw");
    await store(`${base}\n snmp-server location pin-one\n`, 2);
    await store(`${base}\n snmp-server location pin-two\n`, 3);
    const first = await history("pin-", deviceId);
    expect(first.status).toBe(200);
    expect(found(first.body)).toEqual([
      [2, [" snmp-server location pin-two"]],
      [1, [" snmp-server location pin-one"]],
    ]);
    await lineStoreSettled();
    // Its stored texts unreadable: only a search that reads none of them can still answer.
    await c.db.run(
      sql`update config_blobs set content = x'00' where hash in (select blob_hash from configs where device_id = ${deviceId})`,
    );
    const again = await history("pin-", deviceId);
    expect(again.status).toBe(200);
    expect(found(again.body)).toEqual(found(first.body));
  });
});
