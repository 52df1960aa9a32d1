import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { createTestContext, type TestContext } from "../../../../test/helpers/app.ts";
import { devices } from "../../../db/schema/index.ts";
import { nameKey } from "../../../db/name-key.ts";
import { clearLineStore, currentLineStore, whileSearching } from "./line-store.ts";
import { startLineStoreWarmUp, warmLineStore } from "./line-store-warm.ts";
import { createLogger } from "../../../kernel/logger.ts";
import { storeConfig } from "../storage/store.ts";
import { day } from "../test-fixtures.ts";
import { eventLoopTurns } from "../../../../test/helpers/until.ts";

/** More series than one batch of the warm-up reads (64), so that stopping between batches shows. */
const DEVICES = 70;
const text = (device: number, version: number) =>
  `hostname sw-${device}\n${Array.from({ length: 30 }, (_, i) => `interface Gi0/${i}\n description port ${i}`).join("\n")}\n snmp-server location needle-${device}-v${version}\n`;

describe("filling search's line store at start", () => {
  let c: TestContext;
  let token: string;
  const deviceIds: number[] = [];
  const search = (term: string) =>
    c.call(`/api/v1/configs/search?q=${encodeURIComponent(term)}&per_page=500`, { token });

  beforeAll(async () => {
    c = await createTestContext();
    token = await c.token();
    const rows = await c.db
      .insert(devices)
      .values(
        Array.from({ length: DEVICES }, (_, i) => ({
          name: `sw-${i}`,
          nameKey: nameKey(`sw-${i}`),
          ip: `192.0.2.${i + 1}`,
          createdAt: day(1),
          updatedAt: day(1),
        })),
      )
      .returning({ id: devices.id });
    deviceIds.push(...rows.map((r) => r.id));
    for (const version of [1, 2]) {
      for (const [i, deviceId] of deviceIds.entries()) {
        await storeConfig(c.db, {
          deviceId,
          command: "show running-config",
          text: text(i, version),
          significant: (s) => s,
          trigger: "schedule",
          jobId: null,
          now: day(1 + version),
        });
      }
    }
  });
  beforeEach(() => clearLineStore());
  afterAll(() => c?.close());

  it("stops between batches once the store holds what it may, newest versions first", async () => {
    expect(await warmLineStore(c.db, { maxBytes: 1 })).toEqual({ versions: 64, stoppedBy: "budget" });
    const latestHash = async (device: number) =>
      (
        await c.db.all<{ hash: string }>(
          sql`select blob_hash as hash from configs where device_id = ${deviceIds[device]} and version = 2`,
        )
      )[0]!.hash;
    const store = currentLineStore();
    expect(store.versionCount).toBe(64);
    // Stored last, kept; stored first (beyond one batch), left for searches to read.
    expect(store.version(await latestHash(DEVICES - 1))).toBeDefined();
    expect(store.version(await latestHash(DEVICES - 64))).toBeDefined();
    expect(store.version(await latestHash(DEVICES - 65))).toBeUndefined();
    expect(store.version(await latestHash(0))).toBeUndefined();
  });

  it("reads nothing while a search runs, and stops when its signal aborts", async () => {
    let finish!: () => void;
    const running = whileSearching(() => new Promise<void>((resolve) => (finish = resolve)));
    const warming = warmLineStore(c.db);
    await eventLoopTurns();
    expect(currentLineStore().versionCount).toBe(0);
    finish();
    await running;
    expect(await warming).toEqual({ versions: DEVICES });

    clearLineStore();
    const aborted = new AbortController();
    aborted.abort();
    expect(await warmLineStore(c.db, { signal: aborted.signal })).toEqual({ versions: 0, stoppedBy: "signal" });
    expect(currentLineStore().versionCount).toBe(0);
  });

  it("says in the log, once done, how many versions it read (a starting API runs it so)", async () => {
    const lines: { msg: string; versions?: number; lines?: number }[] = [];
    startLineStoreWarmUp(
      c.db,
      createLogger((line) => lines.push(JSON.parse(line))),
    );
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(lines[0]).toMatchObject({
      msg: "search's line store holds the latest versions",
      versions: DEVICES,
      lines: currentLineStore().lineCount,
    });

    // Stopped (the service stopping) before it read anything: nothing to say.
    clearLineStore();
    lines.length = 0;
    startLineStoreWarmUp(
      c.db,
      createLogger((line) => lines.push(JSON.parse(line))),
    ).stop();
    await eventLoopTurns();
    expect(lines).toEqual([]);
    expect(currentLineStore().versionCount).toBe(0);
  });

  it("reads the latest version of every series, so that a search after it reads no text from the database", async () => {
    expect(await warmLineStore(c.db)).toEqual({ versions: DEVICES });
    expect(currentLineStore().versionCount).toBe(DEVICES);
    // Unreadable stored texts (last, as this test leaves them): only a search that reads none can still answer.
    await c.db.run(sql`update config_blobs set content = x'00'`);
    const res = await search("needle-");
    expect(res.status).toBe(200);
    const lines = res.body.data
      .flatMap((hit: { matches: { line: string }[] }) => hit.matches.map((m) => m.line.trim()))
      .sort();
    expect(lines).toEqual(Array.from({ length: DEVICES }, (_, i) => `snmp-server location needle-${i}-v2`).sort());
  });
});
