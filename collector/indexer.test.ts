import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../test/helpers/app.ts";
import { devices } from "../src/db/schema/index.ts";
import { silentLogger } from "../src/kernel/logger.ts";
import { storeConfig } from "../src/modules/configs/storage/store.ts";
import { DEFAULT_INDEXER_OPTIONS, startSearchIndexer } from "./indexer.ts";
import { nameKey } from "../src/db/name-key.ts";
import { until } from "../test/helpers/until.ts";

let t: TestContext;
let deviceId: number;
const queued = async () =>
  Number((await t.db.all<{ n: number }>(sql`select count(*) as n from config_search_pending`))[0]!.n);
const storeVersions = async (n: number, tag: string) => {
  for (let v = 0; v < n; v++) {
    await storeConfig(t.db, {
      deviceId,
      command: `show run ${v}`,
      text: `hostname indexer-${tag}-${v}\n`,
      significant: (s) => s,
      trigger: "schedule",
      jobId: null,
      now: new Date(),
    });
  }
};

beforeAll(async () => {
  t = await createTestContext();
  const [row] = await t.db
    .insert(devices)
    .values({
      name: "indexer-sw",
      nameKey: nameKey("indexer-sw"),
      ip: "192.0.2.1",
      createdAt: new Date(),
      updatedAt: new Date(),
    })
    .returning({ id: devices.id });
  deviceId = row!.id;
});
afterAll(() => t?.close());

/** A busy() that counts how often the indexer asked (once or twice a pass): so a test waits for passes, not time. */
function busyProbe(initial: boolean) {
  const probe = {
    busy: initial,
    asked: 0,
    ask: () => {
      probe.asked++;
      return probe.busy;
    },
    /** Resolves once the indexer has run at least n more passes. */
    passes: (n: number) => {
      const from = probe.asked;
      return until(`${n} passes`, async () => probe.asked >= from + n);
    },
  };
  return probe;
}

describe("the collector's search indexer", () => {
  it("works through the queue batch after batch while downloads leave it room", async () => {
    await storeVersions(7, "a");
    const indexer = startSearchIndexer(
      { db: t.db, clock: manualClock(), logger: silentLogger },
      { ...DEFAULT_INDEXER_OPTIONS, batch: 2, pollIntervalMs: 10_000, busy: () => false },
    );
    try {
      // Four batches of two: only going straight on after a full batch finishes before the 10 s poll.
      // 150 tries (3 s or more) stay well short of the 10 s poll the batches must not wait for.
      await until("an empty queue", queued, (n) => n === 0, { tries: 150 });
    } finally {
      await indexer.stop();
    }
  });

  it("takes one batch per interval while downloads are busy, and the rest once they are not", async () => {
    await storeVersions(8, "b");
    const clock = manualClock();
    const probe = busyProbe(true);
    const indexer = startSearchIndexer(
      { db: t.db, clock, logger: silentLogger },
      { batch: 2, pollIntervalMs: 20, busyIntervalMs: 60_000, busy: probe.ask },
    );
    try {
      await until("one batch", async () => (await queued()) === 6);
      await probe.passes(10);
      expect(await queued()).toBe(6);
      clock.advance(60_000);
      await until("the next batch, an interval later", async () => (await queued()) === 4);
      await probe.passes(10);
      expect(await queued()).toBe(4);
      probe.busy = false;
      await until("an empty queue", async () => (await queued()) === 0);
    } finally {
      await indexer.stop();
    }
  });

  it("takes no batch while downloads wait in the queue, then one per interval while they run", async () => {
    await storeVersions(6, "c");
    let waiting = true;
    const clock = manualClock();
    const probe = busyProbe(true);
    const indexer = startSearchIndexer(
      { db: t.db, clock, logger: silentLogger },
      {
        batch: 2,
        pollIntervalMs: 20,
        busyIntervalMs: 50,
        waitingIntervalMs: 60_000,
        busy: probe.ask,
        waiting: () => waiting,
      },
    );
    try {
      await probe.passes(10);
      clock.advance(59_000);
      await probe.passes(10);
      expect(await queued()).toBe(6);
      waiting = false;
      await until("one batch", async () => (await queued()) === 4);
      clock.advance(50);
      await until("the next batch, an interval later", async () => (await queued()) === 2);
      clock.advance(50);
      await until("an empty queue", async () => (await queued()) === 0);
    } finally {
      await indexer.stop();
    }
  });

  it("still takes a batch per waiting interval under a queue that never empties", async () => {
    await storeVersions(4, "d");
    const clock = manualClock();
    const probe = busyProbe(true);
    const indexer = startSearchIndexer(
      { db: t.db, clock, logger: silentLogger },
      {
        batch: 2,
        pollIntervalMs: 20,
        busyIntervalMs: 0,
        waitingIntervalMs: 150,
        busy: probe.ask,
        waiting: () => true,
      },
    );
    try {
      await probe.passes(10);
      expect(await queued(), "none before the downloads have waited an interval").toBe(4);
      clock.advance(150);
      await until("one batch", async () => (await queued()) === 2);
      await probe.passes(10);
      expect(await queued(), "none again within the interval").toBe(2);
      clock.advance(150);
      await until("the next", async () => (await queued()) === 0);
    } finally {
      await indexer.stop();
    }
  });
});
