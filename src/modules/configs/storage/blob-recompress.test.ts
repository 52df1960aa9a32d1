/**
 * Storage maintenance's recompression: texts and deltas as downloads stored them become zlib with the command's
 * dictionary, read back byte for byte through the API, and keep working with what comes after (new downloads,
 * deleted versions, the purge of a whole fleet).
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { configDictionaries } from "../../../db/schema/index.ts";
import { mulberry32 } from "../../../kernel/random.ts";
import { MIN_DICTIONARY_TEXTS } from "./blob-recompress.ts";
import { maintainConfigStorage } from "./maintenance.ts";
import { purgeConfigs } from "./retention.ts";
import { createDevice, day, storeVersion } from "../test-fixtures.ts";

const rnd = mulberry32(26);
const int = (n: number) => Math.floor(rnd() * n);
const DEVICES = MIN_DICTIONARY_TEXTS + 4;
const VERSIONS = 3;

/** A templated switch configuration: the same layout everywhere, addresses and descriptions of each device's own. */
function firstText(d: number): string[] {
  return [
    "!",
    `hostname site-${d}-sw`,
    "!",
    "service timestamps debug datetime msec",
    "service password-encryption",
    "!",
    ...Array.from({ length: 24 }, (_, i) => [
      `interface GigabitEthernet1/0/${i + 1}`,
      ` description ${["desk", "printer", "ap"][int(3)]} ${int(900) + 100}`,
      ` switchport access vlan ${10 + int(20)}`,
      " switchport mode access",
      " spanning-tree portfast",
      "!",
    ]).flat(),
    `ip access-list extended SITE-${d}`,
    ...Array.from(
      { length: 30 },
      (_, i) =>
        ` ${(i + 1) * 10} permit tcp 10.${int(250)}.${int(250)}.0 0.0.0.255 host 172.16.${int(250)}.${int(250)} eq ${[22, 443, 8080][int(3)]}`,
    ),
    "!",
    "snmp-server community netkeep-ro RO",
    "logging host 10.255.0.14",
    "ntp server 10.255.0.1",
    "end",
    "",
  ];
}
/** The next version: a port moved to another VLAN, an ACL entry added. */
function nextText(lines: string[], v: number): string[] {
  const next = [...lines];
  const vlan = next.findIndex((l, i) => i > 6 * v && l.startsWith(" switchport access vlan "));
  next[vlan] = ` switchport access vlan ${10 + int(20)}`;
  next.splice(
    next.indexOf(
      "!",
      next.findIndex((l) => l.startsWith("ip access-list")),
    ),
    0,
    ` ${400 + v} deny udp any host 192.0.2.${int(250)} eq ${int(60000)}`,
  );
  return next;
}

let t: TestContext;
let token: string;
const deviceIds: number[] = [];
/** Every version's id and the text the API answered for it before maintenance. */
const versions: { id: number; text: string }[] = [];

const content = async (id: number) => (await t.request(`/api/v1/configs/${id}/content`, { token })).text();
const blobStats = async () =>
  t.db.all<{ encoding: string; n: number; bytes: number; dictionaries: number }>(sql`
    select encoding, count(*) as n, sum(length(content)) as bytes, count(distinct dictionary_id) as dictionaries from config_blobs group by encoding order by encoding`);
const totalBytes = async () => (await blobStats()).reduce((n, r) => n + Number(r.bytes), 0);

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
  for (let d = 0; d < DEVICES; d++)
    deviceIds.push(await createDevice(t, token, { device_name: `site-${d}-sw`, device_ip: `10.1.${d}.1` }));
  for (const [d, deviceId] of deviceIds.entries()) {
    let lines = firstText(d);
    for (let v = 0; v < VERSIONS; v++) {
      if (v) lines = nextText(lines, v);
      const res = await storeVersion(t, { deviceId, text: lines.join("\n"), at: day(1 + v) });
      versions.push({ id: res.configId, text: "" });
    }
  }
  for (const v of versions) v.text = await content(v.id);
});
afterAll(() => t?.close());

describe("recompressing stored texts", () => {
  it("rewrites every text and delta with the command's dictionary, much smaller, and every version reads back the same", async () => {
    const before = await totalBytes();
    const { body: diffBefore } = await t.call(`/api/v1/configs/diff?from=${versions[0]!.id}&to=${versions[2]!.id}`, {
      token,
    });
    const report = await maintainConfigStorage(t.db, { now: day(5) });
    expect(report).toMatchObject({ dictionariesAdded: 1, textsRecompressed: DEVICES * VERSIONS });
    expect(await blobStats()).toEqual([
      { encoding: "deflate", n: DEVICES, bytes: expect.any(Number), dictionaries: 1 },
      { encoding: "deflate-delta", n: DEVICES * (VERSIONS - 1), bytes: expect.any(Number), dictionaries: 1 },
    ]);
    expect(await totalBytes()).toBeLessThan(before * 0.6);
    for (const v of versions) expect(await content(v.id)).toBe(v.text);
    expect(
      (await t.call(`/api/v1/configs/diff?from=${versions[0]!.id}&to=${versions[2]!.id}`, { token })).body,
    ).toEqual(diffBefore);
    // Nothing left to do the second time.
    expect(await maintainConfigStorage(t.db, { now: day(6) })).toMatchObject({
      dictionariesAdded: 0,
      textsRecompressed: 0,
    });
  });

  it("goes on with new downloads and deleted versions, and recompresses what they stored the next time", async () => {
    const deviceId = deviceIds[0]!;
    const latest = versions[VERSIONS - 1]!;
    const fresh = await storeVersion(t, {
      deviceId,
      text: `${latest.text.replace("end\n", "banner motd ^new^\nend\n")}`,
      at: day(7),
    });
    // The recompressed latest text became a delta against the new one; the middle version, a base, goes.
    expect((await t.call(`/api/v1/configs/${versions[1]!.id}`, { method: "DELETE", token })).status).toBe(200);
    for (const v of [versions[0]!, latest]) expect(await content(v.id)).toBe(v.text);
    expect(await content(fresh.configId)).toContain("banner motd ^new^");
    const report = await maintainConfigStorage(t.db, { now: day(8) });
    expect(report.textsRecompressed).toBeGreaterThanOrEqual(2);
    expect((await blobStats()).map((r) => r.encoding)).toEqual(["deflate", "deflate-delta"]);
    for (const v of [versions[0]!, latest]) expect(await content(v.id)).toBe(v.text);
  });

  it("keeps a dictionary while a text uses it, and drops it with the last device of its command", async () => {
    await expect(t.db.delete(configDictionaries)).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/FOREIGN KEY/) },
    });
    // No retention policy is set: the system-wide purge still collects the texts deleted devices left behind.
    const stored = (await blobStats()).reduce((n, r) => n + Number(r.n), 0);
    for (const id of deviceIds)
      expect((await t.call(`/api/v1/devices/${id}`, { method: "DELETE", token })).status).toBe(200);
    const purge = await purgeConfigs(t.db, day(9), { dryRun: false });
    expect(purge).toMatchObject({ blobs: stored, configs: [] });
    expect(purge.maintenanceError).toBeUndefined();
    expect(await blobStats()).toEqual([]);
    expect(await t.db.select().from(configDictionaries)).toEqual([]);
  });
});

describe("a command with too few whole texts", () => {
  it("gets no dictionary, however many older versions it has, and its texts stay as they are", async () => {
    const few = await createTestContext();
    try {
      const fewToken = await few.token();
      const devices = Math.floor(MIN_DICTIONARY_TEXTS / 2);
      for (let d = 0; d < devices; d++) {
        const deviceId = await createDevice(few, fewToken, { device_name: `few-${d}`, device_ip: `10.2.${d}.1` });
        let lines = firstText(d);
        for (let v = 0; v < VERSIONS; v++) {
          if (v) lines = nextText(lines, v);
          await storeVersion(few, { deviceId, text: lines.join("\n"), at: day(1 + v) });
        }
      }
      expect(devices * VERSIONS).toBeGreaterThanOrEqual(MIN_DICTIONARY_TEXTS);
      expect(await maintainConfigStorage(few.db, { now: day(5) })).toMatchObject({
        dictionariesAdded: 0,
        textsRecompressed: 0,
      });
      expect(
        (await few.db.all<{ encoding: string }>(sql`select distinct encoding from config_blobs order by encoding`)).map(
          (r) => r.encoding,
        ),
      ).toEqual(["delta", "gzip"]);
    } finally {
      await few.close();
    }
  });
});
