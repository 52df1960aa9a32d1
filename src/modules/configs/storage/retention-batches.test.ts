import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServerType } from "@hono/node-server";
import { isNotNull, sql } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../../test/helpers/app.ts";
import { configChanges, configs, devices } from "../../../db/schema/index.ts";
import { nameKey } from "../../../db/name-key.ts";
import { storeConfig } from "./store.ts";
import { purgeConfigs } from "./retention.ts";
import { indexAllPending } from "../search/search-index.ts";

/** The purge in short transactions: stopped between batches, and the API answering between them. */
const DAY = 86_400_000;
const start = new Date("2026-03-01T00:00:00Z");
const at = (days: number) => new Date(start.getTime() + days * DAY);
const clock = manualClock(at(200));
const COMMAND = "show running-config";

let t: TestContext;
let admin: string;
/** Every version stored: config id -> its device, version and text. */
const texts = new Map<number, { deviceId: number; version: number; text: string }>();
/** Change rows that had a previous version when stored: their diff must stay readable whatever goes. */
let changesWithPrevious: number[];

const body = (device: number, n: number) =>
  [
    `hostname batch-dev-${device}`,
    "interface Gi0/1",
    ` description edit ${n}`,
    ...Array.from({ length: n }, (_, i) => ` vlan ${200 + i}`),
    "end",
    "",
  ].join("\n");

async function seed(deviceCount: number, versions: number) {
  const ids: number[] = [];
  for (let d = 0; d < deviceCount; d++) {
    const [row] = await t.db
      .insert(devices)
      .values({
        name: `batch-dev-${d}`,
        nameKey: nameKey(`batch-dev-${d}`),
        ip: `198.51.100.${d + 1}`,
        createdAt: start,
        updatedAt: start,
      })
      .returning({ id: devices.id });
    ids.push(row!.id);
  }
  for (let n = 1; n <= versions; n++) {
    for (const [d, deviceId] of ids.entries()) {
      // Device 1's third version is device 0's second text: one blob shared across devices and batches.
      const text = d === 1 && n === 3 ? body(0, 2) : body(d, n);
      const res = await storeConfig(t.db, {
        deviceId,
        command: COMMAND,
        text,
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: at(n * 10),
      });
      if (res.changed) texts.set(res.configId, { deviceId, version: res.version, text });
    }
  }
  await indexAllPending(t.db);
  changesWithPrevious = (
    await t.db.select({ id: configChanges.id }).from(configChanges).where(isNotNull(configChanges.previousConfigId))
  ).map((r) => r.id);
}

const remaining = async () =>
  (await t.db.select({ id: configs.id }).from(configs)).map((r) => r.id).sort((a, b) => a - b);

/** The newest `keep` versions of each device, from what the test stored. */
function keptWith(keep: number) {
  const byDevice = new Map<number, number[]>();
  for (const [id, v] of texts) byDevice.set(v.deviceId, [...(byDevice.get(v.deviceId) ?? []), id]);
  return [...byDevice.values()].flatMap((ids) => ids.sort((a, b) => a - b).slice(-keep)).sort((a, b) => a - b);
}

/** Whatever part of a purge is done, the store is whole: texts, diffs and the search index agree with the versions. */
async function expectConsistent() {
  const ids = await remaining();
  for (const id of ids) {
    const res = await t.request(`/api/v1/configs/${id}/content`, { token: admin });
    expect(res.status, `config ${id}`).toBe(200);
    expect(await res.text()).toBe(texts.get(id)!.text);
  }
  // A kept version whose previous one went keeps its diff as text.
  const changes = await t.db.select().from(configChanges);
  for (const c of changes.filter((c) => changesWithPrevious.includes(c.id)))
    expect(c.previousConfigId !== null || c.diff !== null, `change ${c.id}`).toBe(true);
  // No search document of a deleted version; every device's hostname line still found in what is left.
  const stale = await t.db.all<{ n: number }>(
    sql`select count(*) as n from config_search_docs where config_id not in (select id from ${configs})`,
  );
  expect(Number(stale[0]!.n)).toBe(0);
  const hits = await t.call("/api/v1/configs/search?q=hostname%20batch-dev-&latest_only=false", { token: admin });
  expect(hits.status).toBe(200);
  expect(hits.body.data.map((h: { config_id: number }) => h.config_id).sort((a: number, b: number) => a - b)).toEqual(
    ids,
  );
}

beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
  await seed(3, 6);
});
afterAll(() => t.close());

describe("the retention purge in short transactions", () => {
  it("stopped between batches leaves a consistent store, and running it again finishes the job", async () => {
    const policy = await t.call("/api/v1/configs/retention-policy", {
      method: "PUT",
      token: admin,
      body: { keep_versions: 4 },
    });
    expect(policy.status).toBe(200);
    const everything = await remaining();
    const progress: string[] = [];
    const stopped = purgeConfigs(t.db, clock.now(), {
      dryRun: false,
      batchVersions: 2,
      progress: (line) => progress.push(line),
      betweenBatches: ({ versions }) => {
        if (versions >= 2) throw new Error("stopped after the first batch");
      },
    });
    await expect(stopped).rejects.toThrow("stopped after the first batch");
    const afterStop = await remaining();
    // One batch of two versions went, whole.
    expect(everything.length - afterStop.length).toBe(2);
    expect(progress).toEqual(["retention purge: deleted 2 of 6 configuration versions"]);
    await expectConsistent();
    // The activity log says what the stopped purge did delete: the first batch, not the plan.
    const log = await t.call("/api/v1/activity-logs?filter[action]=configs.purge", { token: admin });
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0].changes).toMatchObject({
      configs_deleted: { new: 2 },
      changes_deleted: { new: 2 },
      blobs_deleted: { new: 1 },
    });

    const rerun = await purgeConfigs(t.db, clock.now(), { dryRun: false, batchVersions: 2 });
    expect(rerun.configs.length).toBe(4);
    expect(await remaining()).toEqual(keptWith(4));
    await expectConsistent();
    expect((await purgeConfigs(t.db, clock.now(), { dryRun: true })).configs).toEqual([]);
  });

  it("answers API reads and writes between its batches", async () => {
    await t.call("/api/v1/configs/retention-policy", { method: "PUT", token: admin, body: { keep_versions: 1 } });
    const before = (await remaining()).length;
    const seen: number[] = [];
    const purged = await purgeConfigs(t.db, clock.now(), {
      dryRun: false,
      batchVersions: 3,
      betweenBatches: async ({ versions }) => {
        // A minute on: the token's last use is written again, so the request needs a write turn too.
        clock.advance(61_000);
        const list = await t.call(`/api/v1/configs?per_page=100`, { token: admin });
        expect(list.status).toBe(200);
        seen.push(list.body.data.length);
        expect(before - list.body.data.length).toBe(versions);
        const tag = await t.call("/api/v1/tags", {
          method: "POST",
          token: admin,
          body: { name: `between-${versions}` },
        });
        expect(tag.status).toBe(201);
      },
    });
    // keep_versions 4 left 4 of each of 3 devices: 9 go, 3 a batch.
    expect(purged.configs.length).toBe(9);
    expect(seen).toEqual([before - 3, before - 6, before - 9]);
    expect(await remaining()).toEqual(keptWith(1));
    await expectConsistent();
  });

  it("serves HTTP requests while it runs, not only once it is done", async () => {
    await t.call("/api/v1/configs/retention-policy", { method: "PUT", token: admin, body: { keep_versions: 1 } });
    // A device with a long history: one version a batch gives the request many turns of the event loop.
    const [row] = await t.db
      .insert(devices)
      .values({
        name: "long-history",
        nameKey: nameKey("long-history"),
        ip: "198.51.100.99",
        createdAt: start,
        updatedAt: start,
      })
      .returning({ id: devices.id });
    for (let n = 1; n <= 40; n++) {
      await storeConfig(t.db, {
        deviceId: row!.id,
        command: COMMAND,
        text: body(99, n),
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: at(n),
      });
    }
    let server: ServerType | undefined;
    try {
      const origin = await new Promise<string>((resolve) => {
        server = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
          resolve(`http://127.0.0.1:${info.port}`),
        );
      });
      let batches = 0;
      let answeredAfter: number | undefined;
      const purging = purgeConfigs(t.db, clock.now(), {
        dryRun: false,
        batchVersions: 1,
        betweenBatches: ({ versions }) => {
          batches = versions;
        },
      });
      // Sent as the purge starts: SQLite and zlib run on this thread, so the answer comes only if the purge lets
      // the event loop turn (a purge that only awaits runs to its end first, whatever its transactions).
      const answer = fetch(`${origin}/api/v1/devices`, { headers: { apitoken: admin } }).then(async (res) => {
        answeredAfter = batches;
        return { status: res.status, body: await res.text() };
      });
      const purged = await purging;
      const answered = await answer.catch((err: Error) => ({ status: 0, body: err.message }));
      expect(purged.configs.filter((c) => c.deviceId === row!.id).length).toBe(39);
      expect(answered.status).toBe(200);
      expect(answeredAfter).toBeLessThan(purged.configs.length);
    } finally {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    }
  });
});
