import { createClient } from "@libsql/client";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { databaseAtRelease } from "../../../../test/helpers/migrations.ts";
import { configBlobs, configChanges, configs } from "../../../db/schema/index.ts";
import { blobBase } from "./blobs.ts";
import { unifiedDiff } from "../history/config-diff.ts";
import { readBlob } from "./store.ts";
import { day, RUNNING, storeVersion } from "../test-fixtures.ts";
import { gzipText } from "./text.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";

/** The last migration of the release before delta storage. */
const RELEASED = "0002_search_index";

const texts = Array.from({ length: 3 }, (_, v) =>
  [
    "hostname old-release",
    ...Array.from({ length: 80 }, (_, i) => ` vlan ${i} name ${i % 9 === v ? `moved-${v}` : `users-${i}`}`),
    `banner motd v${v}`,
    "end",
    "",
  ].join("\n"),
);

let t: TestContext;
let admin: string;
let ids: number[];
let deviceId: number;

/** Stores the texts as the released store did: each whole, the change rows with their diffs ("" for a first version). */
async function storeAsReleased(url: string) {
  const client = createClient({ url });
  const now = day(1).getTime();
  const {
    rows: [device],
  } = await client.execute({
    sql: "insert into devices (name, ip, created_at, updated_at) values ('old-release', '192.0.2.50', ?, ?) returning id",
    args: [now, now],
  });
  deviceId = Number(device!.id);
  let previousId: number | null = null;
  for (const [i, text] of texts.entries()) {
    const hash = await sha256Hex(text);
    const at = day(1 + i).getTime();
    await client.execute({
      sql: "insert into config_blobs (hash, encoding, content, size, created_at) values (?, 'gzip', ?, ?, ?)",
      args: [hash, await gzipText(text), text.length, at],
    });
    const {
      rows: [config],
    } = await client.execute({
      sql: `insert into configs (device_id, command, version, blob_hash, significant_hash, lines, size, first_seen_at, last_seen_at, seen_count)
            values (?, ?, ?, ?, ?, ?, ?, ?, ?, 1) returning id`,
      args: [deviceId, RUNNING, i + 1, hash, hash, text.split("\n").length - 1, text.length, at, at],
    });
    const id = Number(config!.id);
    const diff =
      i === 0
        ? { text: "", added: text.split("\n").length - 1, removed: 0 }
        : unifiedDiff(texts[i - 1]!, text, `${RUNNING} v${i}`, `${RUNNING} v${i + 1}`);
    await client.execute({
      sql: `insert into config_changes (device_id, command, config_id, previous_config_id, diff, lines_added, lines_removed, trigger, created_at)
            values (?, ?, ?, ?, ?, ?, ?, 'schedule', ?)`,
      args: [deviceId, RUNNING, id, previousId, diff.text, diff.added, diff.removed, at],
    });
    ids.push(id);
    previousId = id;
  }
  client.close();
}

// Every test upgrades a database of its own, so none sees a version another test stored or deleted.
beforeEach(async () => {
  ids = [];
  const { dir, url } = await databaseAtRelease(RELEASED);
  await storeAsReleased(url);
  t = await createTestContext({ storageDir: dir });
  admin = await t.token();
});
afterEach(() => t?.close());

const content = async (id: number) => (await t.request(`/api/v1/configs/${id}/content`, { token: admin })).text();
const diffOf = async (id: number) =>
  (await t.call(`/api/v2/config-changes/by-config/${id}`, { token: admin })).body.data.diff as string;

describe("a database from the release before delta storage", () => {
  it("keeps every text whole and readable, and every stored diff as it was", async () => {
    for (const [i, id] of ids.entries()) expect(await content(id)).toBe(texts[i]);
    const blobs = await t.db.select().from(configBlobs);
    expect(blobs.map((b) => [b.encoding, b.baseHash])).toEqual(texts.map(() => ["gzip", null]));
    for (const i of [1, 2])
      expect(await diffOf(ids[i]!)).toBe(
        unifiedDiff(texts[i - 1]!, texts[i]!, `${RUNNING} v${i}`, `${RUNNING} v${i + 1}`).text,
      );
    expect(await diffOf(ids[0]!)).toBe(unifiedDiff("", texts[0]!, `${RUNNING} v0`, `${RUNNING} v1`).text);
  });

  it("clears the significant hash of every version but the latest, and still tells an unchanged download", async () => {
    const rows = await t.db
      .select({ version: configs.version, significantHash: configs.significantHash })
      .from(configs)
      .orderBy(configs.version);
    expect(rows).toEqual([
      { version: 1, significantHash: "" },
      { version: 2, significantHash: "" },
      { version: 3, significantHash: await sha256Hex(texts[2]!) },
    ]);
    expect(await storeVersion(t, { deviceId, text: texts[2]!, at: day(9) })).toMatchObject({
      changed: false,
      version: 3,
    });
  });

  it("turns the old latest text into a delta when the next download arrives; every version still reads back", async () => {
    const next = texts[2]!.replace("banner motd v2", "banner motd v3\nlogging host 192.0.2.9");
    const res = await storeVersion(t, { deviceId, text: next, at: day(10) });
    expect(res).toMatchObject({ changed: true, version: 4 });
    const [old] = await t.db
      .select()
      .from(configBlobs)
      .where(eq(configBlobs.hash, await sha256Hex(texts[2]!)));
    expect(old).toMatchObject({ encoding: "delta" });
    expect(await blobBase(t.db, old!.hash)).toBe(await sha256Hex(next));
    for (const [i, id] of ids.entries()) expect(await content(id)).toBe(texts[i]);
    expect(await content(res.configId)).toBe(next);
    expect(await diffOf(res.configId)).toBe(unifiedDiff(texts[2]!, next, `${RUNNING} v3`, `${RUNNING} v4`).text);
    const [change] = await t.db.select().from(configChanges).where(eq(configChanges.configId, res.configId));
    expect(change!.diff).toBeNull();
  });

  it("deletes an old version without touching the others", async () => {
    expect((await t.call(`/api/v1/configs/${ids[1]}`, { method: "DELETE", token: admin })).status).toBe(200);
    for (const i of [0, 2]) expect(await content(ids[i]!)).toBe(texts[i]);
    expect(await diffOf(ids[2]!)).toBe(unifiedDiff(texts[1]!, texts[2]!, `${RUNNING} v2`, `${RUNNING} v3`).text);
    expect(await readBlob(t.db, await sha256Hex(texts[2]!))).toBe(texts[2]);
  });
});
