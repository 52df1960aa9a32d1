import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq, inArray, sql } from "drizzle-orm";
import { createTestContext, manualClock, type TestContext } from "../../../../test/helpers/app.ts";
import {
  configBlobs,
  configChanges,
  configs,
  configSearchDocs,
  deviceTags,
  devices,
  jobs,
  tags,
  taskRunItems,
  taskRuns,
  tasks,
  type JobOutcome,
} from "../../../db/schema/index.ts";
import { blobBase } from "./blobs.ts";
import { readBlob, storeConfig } from "./store.ts";
import { purgeConfigs } from "./retention.ts";
import { indexAllPending } from "../search/search-index.ts";
import { reindexAllConfigs } from "../search/search-reindex.ts";
import { nameKey } from "../../../db/name-key.ts";

const DAY = 86_400_000;
const start = new Date("2026-01-01T00:00:00Z");
const at = (days: number) => new Date(start.getTime() + days * DAY);

// Every test gets an estate of its own (a database, a clock at day 100, the devices, versions and jobs below), so
// none reads what another test purged or set.
let clock: ReturnType<typeof manualClock>;
let t: TestContext;
let admin: string;
/** What the test stored: config id -> its series and text. */
let texts: Map<number, { deviceId: number; command: string; version: number; text: string }>;
let deviceIds: number[];
let runId: number;
let coreTagId: number;

const body = (device: number, n: number) =>
  [
    `hostname purge-dev-${device}`,
    "interface Gi0/1",
    ` description first seen in version ${n === 1 ? "one" : "later"}`,
    ...Array.from({ length: n }, (_, i) => ` vlan ${100 + i}`),
    `line ${n}`,
    "end",
    "",
  ].join("\n");

async function store(deviceId: number, command: string, text: string, day: number) {
  const res = await storeConfig(t.db, {
    deviceId,
    command,
    text,
    significant: (s) => s,
    trigger: "schedule",
    jobId: null,
    now: at(day),
  });
  if (res.changed) texts.set(res.configId, { deviceId, command, version: res.version, text });
  return res;
}

async function job(deviceId: number, outcome: JobOutcome, finishedDay: number) {
  const [row] = await t.db
    .insert(jobs)
    .values({
      type: "download",
      deviceId,
      state: "finished",
      outcome,
      trigger: "schedule",
      runAfter: at(finishedDay),
      createdAt: at(finishedDay),
      finishedAt: at(finishedDay),
    })
    .returning({ id: jobs.id });
  return row!.id;
}

const remainingIds = async () =>
  (await t.db.select({ id: configs.id }).from(configs)).map((r) => r.id).sort((a, b) => a - b);
const setPolicy = (policy: Record<string, unknown>, token = admin) =>
  t.call("/api/v1/configs/retention-policy", { method: "PUT", token, body: policy });
const purge = (dryRun: boolean, token = admin) =>
  t.call(`/api/v1/configs/purge${dryRun ? "?dry_run=true" : ""}`, { method: "POST", token });

beforeEach(async () => {
  clock = manualClock(at(100));
  texts = new Map();
  deviceIds = [];
  t = await createTestContext({ clock });
  admin = await t.token();
  const [core] = await t.db
    .insert(tags)
    .values({ name: "core", nameKey: nameKey("core"), createdAt: start, updatedAt: start })
    .returning({ id: tags.id });
  coreTagId = core!.id;
  for (let d = 0; d < 4; d++) {
    const [row] = await t.db
      .insert(devices)
      .values({
        name: `purge-dev-${d}`,
        nameKey: nameKey(`purge-dev-${d}`),
        ip: `192.0.2.${d + 1}`,
        createdAt: start,
        updatedAt: start,
      })
      .returning({ id: devices.id });
    deviceIds.push(row!.id);
    if (d < 2) await t.db.insert(deviceTags).values({ deviceId: row!.id, tagId: coreTagId });
  }
  const [a, b, c, d] = deviceIds as [number, number, number, number];
  // Device a: six versions ten days apart, the last one still seen yesterday.
  for (let n = 1; n <= 6; n++) await store(a, "show running-config", body(a, n), n * 10);
  await store(a, "show running-config", body(a, 6), 99);
  // Device b: its third version is its first text again (one blob shared by versions 1 and 3).
  await store(b, "show running-config", body(b, 1), 5);
  await store(b, "show running-config", body(b, 2), 15);
  await store(b, "show running-config", body(b, 1), 25);
  // Device c first stores the very text of device a's latest version: a blob shared across devices.
  await store(c, "show running-config", body(a, 6), 12);
  await store(c, "show running-config", body(c, 2), 50);
  await store(c, "show running-config", body(c, 3), 60);
  // Device d: one old version only (the latest is always kept), and a second command.
  await store(d, "show running-config", body(d, 1), 1);
  await store(d, "show version", "Version 1\n", 2);
  await store(d, "show version", "Version 2\n", 3);
  for (const [device, outcome, day] of [
    [a, "timeout", 10],
    [a, "success", 10],
    [b, "auth_failed", 20],
    [c, "error", 95],
    [d, "unchanged", 5],
    [d, "unreachable", 40],
  ] as const) {
    await job(device, outcome, day);
  }
  // A failed download a scheduled run queued: the run's record.
  const [task] = await t.db.select({ id: tasks.id }).from(tasks).limit(1);
  const [run] = await t.db
    .insert(taskRuns)
    .values({
      taskId: task!.id,
      taskType: "download_all",
      trigger: "schedule",
      scheduledFor: at(30),
      startedAt: at(30),
      finishedAt: at(30),
    })
    .returning({ id: taskRuns.id });
  runId = run!.id;
  await t.db
    .insert(taskRunItems)
    .values({ runId, deviceId: b, deviceName: "purge-dev-1", jobId: await job(b, "timeout", 30) });
  // As a collector would have by the time anything is old enough to purge.
  await indexAllPending(t.db);
});
afterEach(() => t.close());

/** A role that sees the devices tagged core (devices 0 and 1), and a token of one of its users. */
const coreOpsToken = async () => {
  await t.role({ name: "core-ops", tags: ["core"] });
  return t.token(undefined, { role: "core-ops" });
};

/** Keeps 30 days and the newest two versions, and purges: what an operator's first policy does. */
async function purgeAged() {
  await setPolicy({ keep_days: 30, keep_versions: 2 });
  const res = await purge(false);
  expect(res.status).toBe(200);
  for (const c of res.body.data.configs as { id: number }[]) texts.delete(c.id);
}

/** A year later keeps the latest version only, and purges: every older version goes. */
async function purgeToLatest() {
  await setPolicy({ keep_days: 1, keep_versions: 1 });
  clock.advance(365 * DAY);
  const res = await purge(false);
  expect(res.status).toBe(200);
  for (const c of res.body.data.configs as { id: number }[]) texts.delete(c.id);
}

describe("retention policy", () => {
  it("starts empty, so a purge removes nothing", async () => {
    expect((await t.call("/api/v1/configs/retention-policy", { token: admin })).body.data).toEqual({
      keep_days: null,
      keep_versions: null,
      updated_at: null,
    });
    const res = await purge(false);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ configs_total: 0, blobs_total: 0, failed_jobs_total: 0 });
    expect(await remainingIds()).toEqual([...texts.keys()].sort((x, y) => x - y));
  });

  it("is read and changed over the API, and changes are logged", async () => {
    const res = await setPolicy({ keep_days: 30 });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ keep_days: 30, keep_versions: null, updated_at: clock.now().toISOString() });
    expect((await t.call("/api/v2/configs/retention-policy", { token: admin })).body.data).toEqual(res.body.data);
    const log = await t.call("/api/v1/activity-logs?filter[action]=retention_policy.update", { token: admin });
    expect(log.body.data[0].changes).toMatchObject({ keep_days: { old: null, new: 30 } });
  });

  it("rejects nonsense with a message saying what to fix", async () => {
    for (const bad of [{ keep_days: 0 }, { keep_versions: 2.5 }, { keep_days: "ten" }, { keep_weeks: 3 }]) {
      const res = await setPolicy(bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.message).toMatch(/keep_days|keep_versions|unknown field/);
    }
  });

  it("may only be changed by a user who sees every device", async () => {
    await setPolicy({ keep_days: 30 });
    const scoped = await coreOpsToken();
    const res = await setPolicy({ keep_days: 1 }, scoped);
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/every device/);
    expect((await t.call("/api/v1/configs/retention-policy", { token: scoped })).body.data.keep_days).toBe(30);
  });
});

describe("purging", () => {
  it("a scoped caller's purge touches only devices in its scope", async () => {
    await setPolicy({ keep_versions: 2 });
    const scoped = await coreOpsToken();
    const dry = await purge(true, scoped);
    const inScope = new Set(deviceIds.slice(0, 2));
    expect(dry.body.data.configs.length).toBeGreaterThan(0);
    expect(dry.body.data.configs.every((c: { device_id: number }) => inScope.has(c.device_id))).toBe(true);
    const all = await purge(true);
    expect(all.body.data.configs.length).toBeGreaterThan(dry.body.data.configs.length);
  });

  it("a dry run lists exactly what the real run then deletes, and changes nothing", async () => {
    await setPolicy({ keep_days: 30, keep_versions: 2 });
    const before = await remainingIds();
    const dry = await purge(true);
    expect(dry.status).toBe(200);
    expect(await remainingIds()).toEqual(before);

    // Worked out from the data: versions beyond the newest two AND last seen before day 70.
    const cutoff = at(100 - 30).getTime();
    const lastSeen = new Map(
      (await t.db.select({ id: configs.id, lastSeenAt: configs.lastSeenAt }).from(configs)).map((r) => [
        r.id,
        r.lastSeenAt.getTime(),
      ]),
    );
    const expected = [...texts.entries()]
      .filter(([id, s]) => {
        const newer = [...texts.values()].filter(
          (o) => o.deviceId === s.deviceId && o.command === s.command && o.version > s.version,
        ).length;
        return newer >= 2 && lastSeen.get(id)! < cutoff;
      })
      .map(([id]) => id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(2);
    expect(dry.body.data.configs.map((c: { id: number }) => c.id).sort((a: number, b: number) => a - b)).toEqual(
      expected,
    );
    const changeRows = await t.db
      .select({ id: configChanges.id })
      .from(configChanges)
      .where(inArray(configChanges.configId, expected));
    expect(dry.body.data.changes_total).toBe(changeRows.length);

    const real = await purge(false);
    expect(real.status).toBe(200);
    expect({ ...real.body.data, dry_run: true }).toEqual(dry.body.data);
    expect(await remainingIds()).toEqual(before.filter((id) => !expected.includes(id)));
    expect(await t.db.select().from(configChanges).where(inArray(configChanges.configId, expected))).toEqual([]);
    for (const id of expected) texts.delete(id);

    const log = await t.call("/api/v1/activity-logs?filter[action]=configs.purge", { token: admin });
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0].changes).toMatchObject({ configs_deleted: { new: expected.length } });
  });

  it("purges failed download records older than keep_days, never successes, recent failures or a task run's", async () => {
    await purgeAged();
    const rows = await t.db.select({ outcome: jobs.outcome, finishedAt: jobs.finishedAt }).from(jobs);
    const left = rows.map((r) => `${r.outcome}@${(r.finishedAt!.getTime() - start.getTime()) / DAY}`).sort();
    expect(left).toEqual(["error@95", "success@10", "timeout@30", "unchanged@5"]);
    // So the run still counts its failure, and is still a failed run.
    const run = await t.call(`/api/v1/task-runs/${runId}`, { token: admin });
    expect(run.body.data).toMatchObject({ status: "failed", counts: { failed: 1, skipped: 0 } });
  });

  it("keeps every text a remaining version refers to, shared or not, and drops the rest", async () => {
    await purgeAged();
    const remaining = await t.db.select({ hash: configs.blobHash }).from(configs);
    for (const { hash } of remaining) await expect(readBlob(t.db, hash)).resolves.toBeTypeOf("string");
    const blobs = await t.db.select({ hash: configBlobs.hash }).from(configBlobs);
    expect(new Set(blobs.map((b) => b.hash))).toEqual(new Set(remaining.map((r) => r.hash)));
  });

  it("always keeps the latest version of every device and command", async () => {
    await purgeAged();
    await setPolicy({ keep_days: 1, keep_versions: 1 });
    clock.advance(365 * DAY);
    const series = await t.db.all<{ device_id: number; command: string; v: number }>(
      sql`select device_id, command, max(version) as v from configs group by 1, 2 order by 1, 2`,
    );
    const real = await purge(false);
    expect(real.body.data.configs_total).toBeGreaterThan(0);
    const after = await t.db.all<{ device_id: number; command: string; v: number; n: number }>(
      sql`select device_id, command, max(version) as v, count(*) as n from configs group by 1, 2 order by 1, 2`,
    );
    expect(after).toEqual(series.map((s) => ({ ...s, n: 1 })));
    for (const id of real.body.data.configs.map((c: { id: number }) => c.id)) texts.delete(id);
  });

  it("leaves every remaining version reading back byte for byte, though texts it kept were deltas against purged ones", async () => {
    // Device a's latest text is also device c's first version, so it became a delta against c's second text,
    // which the purge to the latest deletes: it had to be re-encoded before that blob could go.
    await purgeAged();
    await purgeToLatest();
    const rows = await t.db.select({ id: configs.id, hash: configs.blobHash }).from(configs);
    expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual([...texts.keys()].sort((a, b) => a - b));
    for (const r of rows) expect(await readBlob(t.db, r.hash)).toBe(texts.get(r.id)!.text);
    const bases = await Promise.all(
      (await t.db.select({ hash: configBlobs.hash }).from(configBlobs)).map(async (b) => ({
        ...b,
        base: await blobBase(t.db, b.hash),
      })),
    );
    const stored = new Set(bases.map((b) => b.hash));
    for (const b of bases) if (b.base) expect(stored.has(b.base)).toBe(true);
  });

  it("leaves the search index finding every line of what is left, at one document per series", async () => {
    await purgeAged();
    await purgeToLatest();
    const docs = await t.db.select({ deviceId: configSearchDocs.deviceId }).from(configSearchDocs);
    expect(docs.length).toBe((await remainingIds()).length);
    // "version one" lines came from versions that are gone now; the latest versions of device b and c still have them.
    const res = await t.call("/api/v1/configs/search?q=first%20seen%20in%20version%20one", { token: admin });
    const expected = [...texts.entries()]
      .filter(([, s]) => s.text.includes("first seen in version one"))
      .map(([id]) => id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.data.map((h: { config_id: number }) => h.config_id).sort((a: number, b: number) => a - b)).toEqual(
      expected,
    );
    // Every remaining running configuration has its hostname line, which only the first versions' documents held.
    const hosts = await t.call("/api/v1/configs/search?q=hostname%20purge-dev-&latest_only=false", { token: admin });
    const running = [...texts.entries()]
      .filter(([, s]) => s.command === "show running-config")
      .map(([id]) => id)
      .sort((a, b) => a - b);
    expect(
      hosts.body.data.map((h: { config_id: number }) => h.config_id).sort((a: number, b: number) => a - b),
    ).toEqual(running);
  });

  it("is what the scheduled purge calls: purgeConfigs(db, now, { dryRun })", async () => {
    // Every other series is at its latest version already, so this purge finds only the new device's.
    await purgeToLatest();
    const [device] = await t.db
      .insert(devices)
      .values({
        name: "purge-dev-late",
        nameKey: nameKey("purge-dev-late"),
        ip: "192.0.2.99",
        createdAt: start,
        updatedAt: start,
      })
      .returning({ id: devices.id });
    const now = clock.now();
    for (let n = 1; n <= 3; n++)
      await storeConfig(t.db, {
        deviceId: device!.id,
        command: "show running-config",
        text: body(9, n),
        significant: (s) => s,
        trigger: "schedule",
        jobId: null,
        now: at(-10 + n),
      });
    const dry = await purgeConfigs(t.db, now, { dryRun: true });
    const real = await purgeConfigs(t.db, now, { dryRun: false });
    expect(dry.configs.map((c) => c.id)).toEqual(real.configs.map((c) => c.id));
    expect(real.configs.map((c) => c.version)).toEqual([1, 2]);
    const left = await t.db.select({ version: configs.version }).from(configs).where(eq(configs.deviceId, device!.id));
    expect(left).toEqual([{ version: 3 }]);
  });

  it("collects the texts a deleted device left behind, first rebuilding another device's text that was a delta against one", async () => {
    const [keeper, leaver] = await t.db
      .insert(devices)
      .values([
        {
          name: "purge-dev-keeper",
          nameKey: nameKey("purge-dev-keeper"),
          ip: "192.0.2.101",
          createdAt: start,
          updatedAt: start,
        },
        {
          name: "purge-dev-leaver",
          nameKey: nameKey("purge-dev-leaver"),
          ip: "192.0.2.102",
          createdAt: start,
          updatedAt: start,
        },
      ])
      .returning({ id: devices.id });
    const [x, y] = [body(20, 8), body(21, 9)];
    const now = clock.now().getTime() / DAY - start.getTime() / DAY;
    // The keeper's only text x is also the leaver's first version; the leaver's next one, y, makes x a delta against y.
    await storeConfig(t.db, {
      deviceId: keeper!.id,
      command: "show running-config",
      text: x,
      significant: (s) => s,
      trigger: "schedule",
      jobId: null,
      now: at(now - 3),
    });
    await storeConfig(t.db, {
      deviceId: leaver!.id,
      command: "show running-config",
      text: x,
      significant: (s) => s,
      trigger: "schedule",
      jobId: null,
      now: at(now - 2),
    });
    await storeConfig(t.db, {
      deviceId: leaver!.id,
      command: "show running-config",
      text: y,
      significant: (s) => s,
      trigger: "schedule",
      jobId: null,
      now: at(now - 1),
    });
    const [xRow] = await t.db.select({ hash: configs.blobHash }).from(configs).where(eq(configs.deviceId, keeper!.id));
    expect((await t.db.select().from(configBlobs).where(eq(configBlobs.hash, xRow!.hash)))[0]).toMatchObject({
      encoding: "delta",
    });
    expect((await t.call(`/api/v1/devices/${leaver!.id}`, { method: "DELETE", token: admin })).status).toBe(200);
    const orphan = (await blobBase(t.db, xRow!.hash))!;
    expect(await t.db.select().from(configs).where(eq(configs.blobHash, orphan))).toEqual([]);

    const real = await purgeConfigs(t.db, clock.now(), { dryRun: false });
    expect(real.blobs).toBeGreaterThan(0);
    expect(await t.db.select().from(configBlobs).where(eq(configBlobs.hash, orphan))).toEqual([]);
    expect(await readBlob(t.db, xRow!.hash)).toBe(x);
    const referenced = new Set((await t.db.select({ hash: configs.blobHash }).from(configs)).map((r) => r.hash));
    expect(new Set((await t.db.select({ hash: configBlobs.hash }).from(configBlobs)).map((b) => b.hash))).toEqual(
      referenced,
    );
  });

  it("keeps the search exact when it purges versions a rebuilt index holds in one document", async () => {
    const [device] = await t.db
      .insert(devices)
      .values({
        name: "purge-dev-merged",
        nameKey: nameKey("purge-dev-merged"),
        ip: "192.0.2.103",
        createdAt: start,
        updatedAt: start,
      })
      .returning({ id: devices.id });
    const now = clock.now().getTime() / DAY - start.getTime() / DAY;
    const text = (n: number) =>
      `hostname purge-dev-merged\n! only in version ${n}\n${n >= 3 ? "! since version three\n" : ""}end\n`;
    const ids: number[] = [];
    const save = async (n: number, day: number) =>
      ids.push(
        (
          await storeConfig(t.db, {
            deviceId: device!.id,
            command: "show running-config",
            text: text(n),
            significant: (s) => s,
            trigger: "schedule",
            jobId: null,
            now: at(day),
          })
        ).configId,
      );
    for (let n = 1; n <= 3; n++) await save(n, now - 100 + n);
    await indexAllPending(t.db);
    await reindexAllConfigs(t.db);
    expect(
      await t.db
        .select({ configId: configSearchDocs.configId })
        .from(configSearchDocs)
        .where(eq(configSearchDocs.deviceId, device!.id)),
    ).toEqual([{ configId: ids[2] }]);
    await save(4, now - 1);
    await indexAllPending(t.db);

    await setPolicy({ keep_days: 30, keep_versions: 2 });
    const purged = await purgeConfigs(t.db, clock.now(), { dryRun: false });
    expect(purged.configs.filter((c) => c.deviceId === device!.id).map((c) => c.version)).toEqual([1, 2]);
    const found = async (q: string) =>
      (
        (await t.call(`/api/v1/configs/search?q=${encodeURIComponent(q)}&latest_only=false`, { token: admin })).body
          .data as { config_id: number }[]
      )
        .map((h) => h.config_id)
        .sort((a, b) => a - b);
    expect(await found("only in version 1")).toEqual([]);
    expect(await found("only in version 3")).toEqual([ids[2]]);
    expect(await found("since version three")).toEqual([ids[2], ids[3]]);
    expect(await found("hostname purge-dev-merged")).toEqual([ids[2], ids[3]]);
  });
});
