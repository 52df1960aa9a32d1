import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { configBlobs, configChanges, configs, devices } from "../../../db/schema/index.ts";
import { baseIdOf, blobBase, MAX_CHAIN, putWholeBlobs, readBlobs } from "./blobs.ts";
import { digestOutputs, prepareStore, readBlob, storeConfig, storeConfigs, type StoreInput } from "./store.ts";
import { normalizeConfigText } from "./text.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";
import { nameKey } from "../../../db/name-key.ts";

let t: TestContext;
let deviceA: number;
let deviceB: number;
const day = (n: number) => new Date(Date.UTC(2026, 5, n));
const volatile = [/^! Last configuration change at /, /^ntp clock-period /];
const significant = (text: string) =>
  text
    .split("\n")
    .filter((l) => !volatile.some((re) => re.test(l)))
    .join("\n");

const base = [
  "! Last configuration change at 10:00:00 UTC Mon Jun 1 2026",
  "hostname core-rtr-01",
  "interface Gi0/1",
  " description uplink",
  "ntp clock-period 17179869",
  "end",
].join("\n");

const store = (deviceId: number, text: string, n: number) =>
  storeConfig(t.db, {
    deviceId,
    command: "show running-config",
    text,
    significant,
    trigger: "schedule",
    jobId: null,
    now: day(n),
  });

beforeAll(async () => {
  t = await createTestContext();
});
let made = 0;
// Each test stores on two devices of its own, so none reads the versions another test stored.
beforeEach(async () => {
  const device = (name: string) => ({ name, nameKey: nameKey(name), createdAt: day(1), updatedAt: day(1) });
  made++;
  const rows = await t.db
    .insert(devices)
    .values([
      { ...device(`store-dev-a-${made}`), ip: "192.0.2.1" },
      { ...device(`store-dev-b-${made}`), ip: "192.0.2.2" },
    ])
    .returning({ id: devices.id });
  [deviceA, deviceB] = rows.map((r) => r.id) as [number, number];
});
afterAll(() => t.close());

/** Digests and prepares a download's outputs, as the collector does. */
const prepare = async (input: StoreInput) =>
  prepareStore(t.db, { ...input, outputs: await digestOutputs(input.outputs, input.significant) });

describe("storing configurations", () => {
  it("the same text twice is one version seen twice", async () => {
    const first = await store(deviceA, base, 1);
    const second = await store(deviceA, "\r\n\r\n" + base + "\r\n\r\n", 2);
    expect(first).toMatchObject({ version: 1, changed: true });
    expect(second).toEqual({ configId: first.configId, version: 1, changed: false });
    const [row] = await t.db.select().from(configs).where(eq(configs.id, first.configId));
    expect(row).toMatchObject({ seenCount: 2, firstSeenAt: day(1), lastSeenAt: day(2), lines: 6 });
  });

  it("a first version's change row counts its lines but stores no diff: the text is in its blob already", async () => {
    await store(deviceA, base, 1);
    const [change] = await t.db.select().from(configChanges).where(eq(configChanges.deviceId, deviceA));
    expect(change).toMatchObject({ previousConfigId: null, linesAdded: 6, linesRemoved: 0, diff: null });
  });

  it("a change in volatile lines only makes no new version", async () => {
    await store(deviceA, base, 1);
    const churned = base.replace("10:00:00", "11:30:00").replace("17179869", "17179870");
    expect(await store(deviceA, churned, 3)).toMatchObject({ version: 1, changed: false });
  });

  it("a real change makes the next version and a change row counting its lines (the diff is rendered when asked)", async () => {
    await store(deviceA, base, 1);
    const changed = base.replace(" description uplink", " description uplink to core-2\n shutdown");
    const res = await store(deviceA, changed, 4);
    expect(res).toMatchObject({ version: 2, changed: true });
    const [change] = await t.db.select().from(configChanges).where(eq(configChanges.configId, res.configId));
    expect(change).toMatchObject({ linesAdded: 2, linesRemoved: 1, trigger: "schedule", diff: null });
    expect(
      await readBlob(t.db, (await t.db.select().from(configs).where(eq(configs.id, res.configId)))[0]!.blobHash),
    ).toBe(normalizeConfigText(changed));
  });

  it("stores identical text once, whatever refers to it", async () => {
    const text = "hostname shared\nend\n";
    await store(deviceA, text, 5);
    await store(deviceB, text, 5);
    const rows = await t.db
      .select()
      .from(configs)
      .where(
        eq(configs.blobHash, (await t.db.select().from(configs).where(eq(configs.deviceId, deviceB)))[0]!.blobHash),
      );
    expect(rows).toHaveLength(2);
    const blobs = await t.db.select().from(configBlobs).where(eq(configBlobs.hash, rows[0]!.blobHash));
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!.content.byteLength).toBeGreaterThan(0);
  });

  it("compresses a download's text at zlib's fastest level: maintenance recompresses it at its best", async () => {
    const text = Array.from(
      { length: 400 },
      (_, i) => `interface Gi1/0/${i}\n description port ${i}\n switchport access vlan ${i % 40}`,
    ).join("\n");
    const { configId } = await store(deviceB, text, 6);
    const [{ blobHash }] = (await t.db
      .select({ blobHash: configs.blobHash })
      .from(configs)
      .where(eq(configs.id, configId))) as [{ blobHash: string }];
    const [blob] = await t.db.select().from(configBlobs).where(eq(configBlobs.hash, blobHash));
    expect(blob!.encoding).toBe("gzip");
    // gzip's header records the level in its XFL byte (RFC 1952): 4 for the fastest, 2 for the best, 0 otherwise.
    expect(new Uint8Array(blob!.content)[8]).toBe(4);
    expect(await readBlob(t.db, blobHash)).toBe(normalizeConfigText(text));
  });
});

describe("older versions as reverse deltas", () => {
  /** A realistic series: each version edits, adds and drops a few of 300 lines. */
  const series = (seed: string, n: number) =>
    Array.from({ length: n }, (_, v) =>
      [
        `hostname ${seed}`,
        ...Array.from({ length: 300 }, (_, i) =>
          i % 37 === v % 37
            ? ` interface Gi0/${i} description changed in v${v}`
            : ` interface Gi0/${i} description port ${i}`,
        ),
        ...Array.from({ length: v }, (_, i) => `ip route 10.${v}.${i}.0 255.255.255.0 192.0.2.1`),
        "end",
        "",
      ].join("\n"),
    );
  const storeAll = async (deviceId: number, command: string, texts: string[], from: number) => {
    const hashes: string[] = [];
    for (const [i, text] of texts.entries()) {
      const res = await storeConfig(t.db, {
        deviceId,
        command,
        text,
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: day(from + i),
      });
      expect(res.changed).toBe(true);
      hashes.push((await t.db.select().from(configs).where(eq(configs.id, res.configId)))[0]!.blobHash);
    }
    return hashes;
  };
  // Its base by hash, whether the row names it by id or (as before ids) by hash.
  const blob = async (hash: string) => ({
    ...(await t.db.select().from(configBlobs).where(eq(configBlobs.hash, hash)))[0]!,
    baseHash: await blobBase(t.db, hash),
  });
  const chainLength = async (hash: string) => {
    let n = 0;
    for (let b = await blob(hash); b.baseHash; b = await blob(b.baseHash)) n++;
    return n;
  };

  it("keeps the latest version whole and every older one a smaller delta that reads back byte for byte", async () => {
    const texts = series("delta-a", 8);
    const hashes = await storeAll(deviceA, "show delta", texts, 1);
    for (const [i, hash] of hashes.entries()) expect(await readBlob(t.db, hash)).toBe(texts[i]);
    const latest = await blob(hashes.at(-1)!);
    expect(latest).toMatchObject({ encoding: "gzip", baseHash: null });
    for (const [i, hash] of hashes.slice(0, -1).entries()) {
      const row = await blob(hash);
      expect(row).toMatchObject({ encoding: "delta", baseHash: hashes[i + 1] });
      expect(row.content.byteLength).toBeLessThan(latest.content.byteLength / 4);
    }
  });

  it("reads many texts at once, each chain once, stopping at texts the reader already has", async () => {
    const texts = series("delta-batch", 6);
    const hashes = await storeAll(deviceB, "show delta batch", texts, 1);
    const all = await readBlobs(t.db, [...hashes].reverse());
    expect(hashes.map((h) => all.get(h))).toEqual(texts);
    // The older half, given the newer half: the same texts, whatever order they are asked in.
    const known = new Map(hashes.slice(3).map((h) => [h, all.get(h)!]));
    const older = await readBlobs(t.db, [hashes[1]!, hashes[0]!, hashes[2]!, hashes[4]!], known);
    expect([0, 1, 2, 4].map((i) => older.get(hashes[i]!))).toEqual([0, 1, 2, 4].map((i) => texts[i]));
    // A text that is not stored is left out.
    expect([...(await readBlobs(t.db, ["0".repeat(64), hashes[5]!])).keys()]).toEqual([hashes[5]]);
  });

  it("reads back older versions holding characters of every UTF-8 length", async () => {
    const texts = series("delta-utf8", 3).map((text, v) =>
      text.replace("hostname delta-utf8", `hostname delta-utf8\nbanner motd Zürich ✓ 😀 v${v}`),
    );
    const hashes = await storeAll(deviceB, "show delta utf8", texts, 1);
    expect((await blob(hashes[0]!)).encoding).toBe("delta");
    for (const [i, hash] of hashes.entries()) expect(await readBlob(t.db, hash)).toBe(texts[i]);
    expect([...(await readBlobs(t.db, hashes)).values()]).toEqual(texts);
  });

  it("refuses to hand back a text rebuilt from the wrong base", async () => {
    const texts = series("delta-wrong-base", 4);
    const hashes = await storeAll(deviceB, "show delta wrong base", texts, 1);
    await t.db
      .update(configBlobs)
      .set({ baseId: await baseIdOf(t.db, hashes[3]!) })
      .where(eq(configBlobs.hash, hashes[0]!));
    await expect(readBlob(t.db, hashes[0]!)).rejects.toThrow(/config blob .* (is corrupt|has a broken delta)/);
    await t.db
      .update(configBlobs)
      .set({ baseId: await baseIdOf(t.db, hashes[1]!) })
      .where(eq(configBlobs.hash, hashes[0]!));
    expect(await readBlob(t.db, hashes[0]!)).toBe(texts[0]);
  });

  it("bounds every chain: a long series starts a new whole text rather than grow one past the limit", async () => {
    const texts = series("delta-long", MAX_CHAIN + 6);
    const hashes = await storeAll(deviceB, "show delta long", texts, 1);
    for (const [i, hash] of hashes.entries()) expect(await readBlob(t.db, hash)).toBe(texts[i]);
    const lengths = await Promise.all(hashes.map(chainLength));
    expect(Math.max(...lengths)).toBe(MAX_CHAIN);
    expect(lengths.filter((n) => n === 0).length).toBeGreaterThan(1);
  });

  it("a version going back to an older text makes that text whole again, with no loop between the two", async () => {
    const [x, y] = series("delta-revert", 2) as [string, string];
    const hashes = await storeAll(deviceA, "show delta revert", [x, y, x, y, x], 1);
    for (const [i, hash] of hashes.entries()) expect(await readBlob(t.db, hash)).toBe([x, y, x, y, x][i]);
    expect(await blob(hashes[4]!)).toMatchObject({ encoding: "gzip", baseHash: null });
    expect(await blob(hashes[3]!)).toMatchObject({ encoding: "delta", baseHash: hashes[4] });
  });

  it("refuses to delete a text that another is a delta against", async () => {
    const hashes = await storeAll(deviceB, "show delta fk", series("delta-fk", 2), 1);
    await t.db.delete(configs).where(eq(configs.blobHash, hashes[1]!));
    const failure = await t.db
      .delete(configBlobs)
      .where(eq(configBlobs.hash, hashes[1]!))
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(String((failure?.cause as Error | undefined)?.message)).toMatch(/FOREIGN KEY/);
    expect(await readBlob(t.db, hashes[0]!)).toBe(series("delta-fk", 2)[0]);
  });

  it("a text stored before today's normalising (a leading blank line, as older releases kept) is not a new version", async () => {
    // As an older release stored it: the blank line IOS leaves after 'Building configuration...'.
    const old = `\n${base}\n`;
    const hash = await sha256Hex(old);
    await putWholeBlobs(t.db, [{ hash, text: old, size: old.length }], day(1));
    await t.db.insert(configs).values({
      deviceId: deviceB,
      command: "show old-release",
      version: 1,
      blobHash: hash,
      significantHash: await sha256Hex(significant(old)),
      lines: 7,
      size: old.length,
      firstSeenAt: day(1),
      lastSeenAt: day(1),
    });
    const res = await storeConfig(t.db, {
      deviceId: deviceB,
      command: "show old-release",
      text: base,
      significant,
      trigger: "schedule",
      jobId: null,
      now: day(2),
    });
    expect(res).toMatchObject({ version: 1, changed: false });
  });

  it("stores a download's commands together: unchanged, changed and new at once, a text two of them share once", async () => {
    const [a1, b1, c1] = series("together", 3) as [string, string, string];
    const job = async (outputs: [string, string][], n: number) =>
      storeConfigs(
        t.db,
        await prepare({
          deviceId: deviceB,
          outputs: outputs.map(([command, text]) => ({ command, text })),
          significant: (_, s) => s,
          trigger: "schedule",
          jobId: null,
          now: day(n),
        }),
      );
    const hashOf = async (text: string) => sha256Hex(text);
    const first = await job(
      [
        ["show a", a1],
        ["show b", b1],
      ],
      1,
    );
    expect(first.map((r) => [r.version, r.changed])).toEqual([
      [1, true],
      [1, true],
    ]);
    const second = await job(
      [
        ["show a", a1],
        ["show b", a1],
        ["show c", c1],
      ],
      2,
    );
    expect(second.map((r) => [r.version, r.changed])).toEqual([
      [1, false],
      [2, true],
      [1, true],
    ]);
    expect(second[0]!.configId).toBe(first[0]!.configId);
    expect(await blob(await hashOf(a1))).toMatchObject({ encoding: "gzip", baseHash: null });
    expect(await blob(await hashOf(b1))).toMatchObject({ encoding: "delta", baseHash: await hashOf(a1) });
    // A text that was a delta (b1) becomes a latest text again: whole.
    await job(
      [
        ["show a", b1],
        ["show b", a1],
      ],
      3,
    );
    expect(await blob(await hashOf(b1))).toMatchObject({ encoding: "gzip", baseHash: null });
    const rows = await t.db
      .select({ command: configs.command, version: configs.version, hash: configs.blobHash })
      .from(configs)
      .where(eq(configs.deviceId, deviceB));
    const expected: Record<string, string[]> = { "show a": [a1, b1], "show b": [b1, a1], "show c": [c1] };
    for (const r of rows.filter((r) => r.command in expected))
      expect(await readBlob(t.db, r.hash)).toBe(expected[r.command]![r.version - 1]);
    await expect(
      job(
        [
          ["show a", a1],
          ["show a", b1],
        ],
        5,
      ),
    ).rejects.toThrow(/one output per command/);
  });

  it("stores right what was prepared before another download moved the latest version on", async () => {
    const [x, y] = series("prepared", 2) as [string, string];
    const input = (text: string, n: number) => ({
      deviceId: deviceB,
      outputs: [{ command: "show prepared", text }],
      significant: (_: string, s: string) => s,
      trigger: "schedule" as const,
      jobId: null,
      now: day(n),
    });
    await storeConfigs(t.db, await prepare(input(x, 1)));
    // Prepared while x is the latest: nothing to compress, it would only be seen again.
    const stale = await prepare(input(x, 3));
    expect(stale.compressed.size).toBe(0);
    await storeConfigs(t.db, await prepare(input(y, 2)));
    const [result] = await storeConfigs(t.db, stale);
    expect(result).toMatchObject({ version: 3, changed: true });
    const [row] = await t.db.select().from(configs).where(eq(configs.id, result!.configId));
    expect(await readBlob(t.db, row!.blobHash)).toBe(normalizeConfigText(x));
    expect(await blob(row!.blobHash)).toMatchObject({ encoding: "gzip" });
  });
});
