import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { devices } from "../../../db/schema/index.ts";
import { mulberry32 } from "../../../kernel/random.ts";
import { maintainConfigStorage, MIN_SERIES } from "./maintenance.ts";
import { purgeConfigs } from "./retention.ts";
import { commonGrams } from "../search/search-common-grams.ts";
import { storeConfig } from "./store.ts";
import { indexAllPending } from "../search/search-index.ts";
import { nameKey } from "../../../db/name-key.ts";

const rnd = mulberry32(11);
const int = (n: number) => Math.floor(rnd() * n);
const DEVICES = MIN_SERIES + 20;

/** Templated configurations: the same boilerplate everywhere, a few lines of each device's own. */
const config = (d: number, v: number) =>
  [
    `hostname site-${d}-sw`,
    "service timestamps debug datetime msec",
    "service password-encryption",
    "logging host 10.255.0.14",
    "ntp server 10.255.0.1",
    "snmp-server community netkeep-ro RO",
    "aaa new-model",
    "aaa authentication login default group tacacs+ local",
    ...Array.from({ length: 6 }, (_, i) => [
      `interface GigabitEthernet1/0/${i + 1}`,
      ` description port ${i + 1}`,
      ` switchport access vlan ${10 + i}`,
      "!",
    ]).flat(),
    `ip access-list extended SITE-${d}`,
    ` 10 permit tcp host 172.${16 + (d % 8)}.${d}.${1 + v} any eq 443`,
    ...(v > 0 ? [` 20 deny udp host 192.0.2.${d % 200} any eq ${int(60000)}`] : []),
    "end",
    "",
  ].join("\n");

let t: TestContext;
let token: string;
const ids: number[] = [];

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  const now = new Date("2026-06-01T00:00:00Z");
  const rows = await t.db
    .insert(devices)
    .values(
      Array.from({ length: DEVICES }, (_, d) => ({
        name: `site-${d}-sw`,
        nameKey: nameKey(`site-${d}-sw`),
        ip: `10.1.${d}.1`,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .returning({ id: devices.id });
  ids.push(...rows.map((r) => r.id));
  for (let v = 0; v < 2; v++) {
    for (const [d, id] of ids.entries()) {
      await storeConfig(t.db, {
        deviceId: id,
        command: "show running-config",
        text: config(d, v),
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: new Date(now.getTime() + v * 86_400_000),
      });
    }
  }
  await indexAllPending(t.db);
});
afterAll(() => t?.close());

const indexBytes = async () =>
  Number(
    (await t.db.all<{ n: number }>(sql`select sum(pgsize) as n from dbstat where name like 'config_search%'`))[0]!.n,
  );
const search = async (q: string, latest = false) =>
  (
    await t.call("/api/v1/configs/search", {
      method: "POST",
      token,
      body: { terms: [q], latest_only: latest, per_page: 500, case_sensitive: true },
    })
  ).body;

describe("storage maintenance", () => {
  it("names the boilerplate's tokens common, rebuilds the index without them and hands the freed pages back", async () => {
    const before = await indexBytes();
    const hits = await Promise.all(
      ["site-7-sw", "logging host 10.255.0.14", "172.23.7.2", "deny udp host 192.0.2.5 "].map((q) => search(q)),
    );
    const report = await maintainConfigStorage(t.db);
    expect(report.commonGramsAdded).toBeGreaterThan(100);
    expect(report).toMatchObject({ seriesReindexed: DEVICES, versionsReindexed: DEVICES * 2 });
    expect(report.pagesFreed).toBeGreaterThan(0);
    expect(await indexBytes()).toBeLessThan(before * 0.7);
    const [{ free }] = (await t.db.all<{ free: number }>(
      sql`select freelist_count as free from pragma_freelist_count`,
    )) as [{ free: number }];
    expect(Number(free)).toBe(0);
    // The same answers, the device's own lines still narrowing the search to its configurations.
    const after = await Promise.all(
      ["site-7-sw", "logging host 10.255.0.14", "172.23.7.2", "deny udp host 192.0.2.5 "].map((q) => search(q)),
    );
    expect(after.map((r) => r.data)).toEqual(hits.map((r) => r.data));
    expect(after[0].search).toMatchObject({ index_used: true, configs_checked: 2 });
    expect(after[1].search).toMatchObject({ index_used: false, configs_checked: DEVICES * 2 });
    expect(after[1].data).toHaveLength(DEVICES * 2);
  });

  it("indexes what arrives later without the common tokens, and finds it", async () => {
    const common = await commonGrams(t.db);
    const text = config(3, 2).replace("end\n", "banner motd ^unique-banner-text^\nend\n");
    const res = await storeConfig(t.db, {
      deviceId: ids[3]!,
      command: "show running-config",
      text,
      significant: (s) => s,
      trigger: "schedule",
      jobId: null,
      now: new Date("2026-06-05T00:00:00Z"),
    });
    expect(res.changed).toBe(true);
    const found = await search("unique-banner-text", true);
    expect(found.data.map((h: { config_id: number }) => h.config_id)).toEqual([res.configId]);
    expect(found.search.index_used).toBe(true);
    // Nothing new is common yet, and running it again changes nothing but the merge.
    const again = await maintainConfigStorage(t.db);
    expect(again).toMatchObject({ commonGramsAdded: 0, seriesReindexed: 0 });
    expect((await commonGrams(t.db)).count).toBe(common.count);
  });

  it("runs after the system-wide purge, not after an API caller's", async () => {
    const system = await purgeConfigs(t.db, new Date(), { dryRun: false });
    expect(system.maintenance).toMatchObject({ commonGramsAdded: 0 });
    const scoped = await purgeConfigs(t.db, new Date(), { dryRun: false, scope: { all: true } });
    expect(scoped.maintenance).toBeUndefined();
    const dry = await purgeConfigs(t.db, new Date(), { dryRun: true });
    expect(dry.maintenance).toBeUndefined();
  });

  it("counts a token's series, not its documents: a ticket in every edit of a few long histories stays in the index", async () => {
    // 7 devices x 10 edits, each adding a line: the ticket's tokens are in 70 documents, more than half the
    // 120 series' worth, but in 7 series.
    const few = ids.slice(10, 17);
    for (let v = 0; v < 10; v++) {
      for (const [k, id] of few.entries()) {
        const text = config(10 + k, 1).replace(
          "end\n",
          `${Array.from({ length: v + 1 }, (_, e) => `! audit ticket zq-audit-${k}-${e}`).join("\n")}\nend\n`,
        );
        await storeConfig(t.db, {
          deviceId: id,
          command: "show running-config",
          text,
          significant: (s) => s,
          trigger: "schedule",
          jobId: null,
          now: new Date(Date.UTC(2026, 5, 10 + v)),
        });
      }
    }
    await maintainConfigStorage(t.db);
    const found = await search("zq-audit-");
    expect(found.search).toMatchObject({ index_used: true, configs_checked: few.length * 12 });
    expect(found.data).toHaveLength(few.length * 10);
  });
});
