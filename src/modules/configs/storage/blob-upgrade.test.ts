import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { databaseAtRelease } from "../../../../test/helpers/migrations.ts";
import { configBlobs } from "../../../db/schema/index.ts";
import { MIN_DICTIONARY_TEXTS } from "./blob-recompress.ts";
import { encodeLineDelta } from "./blob-delta.ts";
import { maintainConfigStorage } from "./maintenance.ts";
import { day, RUNNING, storeVersion } from "../test-fixtures.ts";
import { gzipText } from "./text.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";

/** The last migration of the release before base ids. */
const RELEASED = "0016_metrics_mail";
const DEVICES = MIN_DICTIONARY_TEXTS + 2;

/** Two versions per device: a templated configuration, then one port moved to another VLAN. */
const versionsOf = (d: number) => {
  const first = [
    "!",
    `hostname upgrade-${d}`,
    ...Array.from({ length: 40 }, (_, i) => [
      `interface GigabitEthernet1/0/${i + 1}`,
      ` description desk ${(d * 37 + i * 11) % 900}`,
      ` switchport access vlan ${10 + ((d + i) % 7)}`,
      "!",
    ]).flat(),
    "end",
    "",
  ].join("\n");
  return [first, first.replace(" switchport access vlan", " switchport access vlan 99\n switchport voice vlan")];
};

let t: TestContext;
let token: string;
const versions: { id: number; text: string; deviceId: number }[] = [];

/** Stores the versions as the released store did: the latest whole, the one before a gzipped delta naming its base by hash. */
async function storeAsReleased(url: string) {
  const client = createClient({ url });
  const at = day(1).getTime();
  for (let d = 0; d < DEVICES; d++) {
    const {
      rows: [device],
    } = await client.execute({
      sql: "insert into devices (name, name_key, ip, created_at, updated_at) values (?, ?, ?, ?, ?) returning id",
      args: [`upgrade-${d}`, `upgrade-${d}`, `192.0.2.${d + 1}`, at, at],
    });
    const deviceId = Number(device!.id);
    const [v1, v2] = versionsOf(d) as [string, string];
    const [h1, h2] = [await sha256Hex(v1), await sha256Hex(v2)];
    await client.execute({
      sql: "insert into config_blobs (hash, encoding, content, size, created_at) values (?, 'gzip', ?, ?, ?)",
      args: [h2, await gzipText(v2), v2.length, at],
    });
    await client.execute({
      sql: "insert into config_blobs (hash, encoding, base_hash, content, size, created_at) values (?, 'delta', ?, ?, ?, ?)",
      args: [h1, h2, await gzipText(encodeLineDelta(v1, v2)), v1.length, at],
    });
    for (const [i, [hash, text]] of [
      [h1, v1],
      [h2, v2],
    ].entries()) {
      const {
        rows: [config],
      } = await client.execute({
        sql: `insert into configs (device_id, command, version, blob_hash, significant_hash, lines, size, first_seen_at, last_seen_at, seen_count)
              values (?, ?, ?, ?, ?, ?, ?, ?, ?, 1) returning id`,
        args: [deviceId, RUNNING, i + 1, hash!, i ? hash! : "", text!.split("\n").length - 1, text!.length, at, at],
      });
      versions.push({ id: Number(config!.id), text: text!, deviceId });
    }
  }
  client.close();
}

beforeAll(async () => {
  const { dir, url } = await databaseAtRelease(RELEASED);
  await storeAsReleased(url);
  t = await createTestContext({ storageDir: dir });
  token = await t.token();
});
afterAll(() => t?.close());

const content = async (id: number) => (await t.request(`/api/v1/configs/${id}/content`, { token })).text();
const rows = () =>
  t.db
    .select({ encoding: configBlobs.encoding, baseHash: configBlobs.baseHash, baseId: configBlobs.baseId })
    .from(configBlobs);

describe("a database whose deltas name their base by hash", () => {
  it("reads every version back, and a new download makes a delta by base id beside them", async () => {
    for (const v of versions) expect(await content(v.id)).toBe(v.text);
    const last = versions.at(-1)!;
    const next = await storeVersion(t, {
      deviceId: last.deviceId,
      text: last.text.replace("end\n", "banner motd ^v3^\nend\n"),
      at: day(2),
    });
    expect(await content(next.configId)).toContain("banner motd ^v3^");
    for (const v of versions) expect(await content(v.id)).toBe(v.text);
    const deltas = (await rows()).filter((r) => r.encoding === "delta");
    expect(deltas.filter((r) => r.baseHash !== null)).toHaveLength(DEVICES);
    expect(deltas.filter((r) => r.baseId !== null)).toHaveLength(1);
  });

  it("moves them to base ids when maintenance recompresses them; every version still reads back", async () => {
    const report = await maintainConfigStorage(t.db, { now: day(3) });
    expect(report).toMatchObject({ dictionariesAdded: 1 });
    const after = await rows();
    expect(after.filter((r) => r.baseHash !== null)).toEqual([]);
    expect(after.filter((r) => r.encoding === "deflate-delta" && r.baseId !== null)).toHaveLength(DEVICES + 1);
    for (const v of versions) expect(await content(v.id)).toBe(v.text);
  });
});
