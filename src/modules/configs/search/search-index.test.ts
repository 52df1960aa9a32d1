import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { devices } from "../../../db/schema/index.ts";
import { indexPendingVersions } from "./search-index.ts";
import { reindexAllConfigs } from "./search-reindex.ts";
import { SCAN_LIMIT } from "./search.ts";
import { storeConfig } from "../storage/store.ts";
import { nameKey } from "../../../db/name-key.ts";

let t: TestContext;
const deviceIds: number[] = [];
const day = (n: number) => new Date(Date.UTC(2026, 2, n));

const config = (d: number, v: number) =>
  [
    `hostname idx-${d}`,
    ...Array.from({ length: 5 + v }, (_, i) => ` ip route 10.${d}.${i}.0 255.255.255.0 192.0.2.${v}`),
    `banner motd version-${v}`,
    "end",
    "",
  ].join("\n");
const store = (d: number, v: number) =>
  storeConfig(t.db, {
    deviceId: deviceIds[d]!,
    command: "show running-config",
    text: config(d, v),
    significant: (s) => s,
    trigger: "schedule",
    jobId: null,
    now: day(v + 1),
  });
const count = async (query: ReturnType<typeof sql>) => Number((await t.db.all<{ n: number }>(query))[0]!.n);
const queued = () => count(sql`select count(*) as n from config_search_pending`);

/** Which tokens each document holds, as "device id / config id: token" strings. */
async function documents(): Promise<string[]> {
  return t.db.transaction(async (tx) => {
    await tx.run(sql`create virtual table temp.idx_vocab using fts5vocab(main, config_search, instance)`);
    const rows = await tx.all<{ device_id: number; config_id: number; term: string }>(
      sql`select d.device_id, d.config_id, v.term from temp.idx_vocab v join config_search_docs d on d.id = v.doc`,
    );
    await tx.run(sql`drop table temp.idx_vocab`);
    return rows.map((r) => `${r.device_id}/${r.config_id}: ${r.term}`).sort();
  });
}

beforeAll(async () => {
  t = await createTestContext();
  const now = day(1);
  const rows = await t.db
    .insert(devices)
    .values(
      Array.from({ length: 4 }, (_, d) => ({
        name: `idx-${d}`,
        nameKey: nameKey(`idx-${d}`),
        ip: `192.0.2.${d + 1}`,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .returning({ id: devices.id });
  deviceIds.push(...rows.map((r) => r.id));
});
afterAll(() => t?.close());

describe("the search index queue", () => {
  it("queues every stored version and nothing a repeated download stores", async () => {
    for (let v = 0; v < 3; v++) for (let d = 0; d < 4; d++) await store(d, v);
    await store(0, 2);
    expect(await queued()).toBe(12);
  });

  it("lets two indexers at once take each version once", async () => {
    const taken = await Promise.all([indexPendingVersions(t.db, 100), indexPendingVersions(t.db, 100)]);
    expect(taken[0]!.taken + taken[1]!.taken).toBe(12);
    expect(await queued()).toBe(0);
    expect(await count(sql`select count(*) as n from config_search_docs`)).toBe(12);
    expect(await count(sql`select count(distinct config_id) as n from config_search_docs`)).toBe(12);
  });

  it("holds after a rebuild every token it held, in one document per series named after its newest version", async () => {
    const queuedDocs = await documents();
    expect(queuedDocs.length).toBeGreaterThan(100);
    await reindexAllConfigs(t.db);
    expect(await count(sql`select count(*) as n from config_search_docs`)).toBe(4);
    const newest = new Map(
      (
        await t.db.all<{ device_id: number; id: number }>(
          sql`select device_id, max(id) as id from configs group by device_id`,
        )
      ).map((r) => [r.device_id, r.id]),
    );
    // The per-version documents' tokens, each series' under its newest version, each token once.
    const merged = [
      ...new Set(
        queuedDocs.map((d) => {
          const [device, rest] = d.split("/");
          return `${device}/${newest.get(Number(device))}:${rest!.slice(rest!.indexOf(":") + 1)}`;
        }),
      ),
    ].sort();
    expect(await documents()).toEqual(merged);
  });

  it("forgets the queued versions of a deleted device, and indexes the rest", async () => {
    for (let d = 0; d < 4; d++) await store(d, 3);
    await t.db.delete(devices).where(eq(devices.id, deviceIds[3]!));
    expect(await queued()).toBe(3);
    expect(await indexPendingVersions(t.db, 100)).toEqual({ taken: 3, unreadable: [] });
    expect(await count(sql`select count(*) as n from config_search_docs where device_id = ${deviceIds[3]!}`)).toBe(0);
  });

  it("takes a version whose stored text cannot be read out of the queue, naming it, and indexes the rest", async () => {
    const broken = await store(0, 4);
    const fine = await store(1, 4);
    await t.db.run(
      sql`update config_blobs set content = x'00' where hash = (select blob_hash from configs where id = ${broken.configId})`,
    );
    expect(await indexPendingVersions(t.db, 100)).toEqual({ taken: 2, unreadable: [broken.configId] });
    expect(await queued()).toBe(0);
    expect(await count(sql`select count(*) as n from config_search_docs where config_id = ${fine.configId}`)).toBe(1);
  });

  it("says so when a search is too broad while versions wait for the index", async () => {
    // More configurations than a search may read, all queued: as after a first backup of a large fleet.
    const [row] = await t.db.all<{ hash: string }>(sql`select blob_hash as hash from configs limit 1`);
    await t.db.run(sql`
      insert into configs (device_id, command, version, blob_hash, significant_hash, lines, size, first_seen_at, last_seen_at, seen_count)
      select ${deviceIds[2]!}, 'show many ' || value, 1, ${row!.hash}, '', 1, 1, 0, 0, 1 from generate_series(1, ${SCAN_LIMIT + 1})`);
    await t.db.run(
      sql`insert into config_search_pending (config_id, device_id, command) select id, device_id, command from configs where command like 'show many %'`,
    );
    const res = await t.call("/api/v1/configs/search", {
      method: "POST",
      token: await t.token(),
      body: { terms: [String.raw`\d{3}`], regex: true },
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain(`${SCAN_LIMIT + 1} stored versions are still waiting for the search index`);
  });
});
