import { readdirSync, readFileSync } from "node:fs";
import { createClient } from "@libsql/client";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configs, devices, templates } from "../src/db/schema/index.ts";
import { isBusy, WAIT_UNTIL_WRITTEN } from "../src/db/write-turns.ts";
import { openDatabase } from "../src/db/client.ts";
import { claimNextJob, enqueueDeviceJob, getJob, type Job } from "../src/platform/jobs/queue.ts";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, IOS_CONFIG_COMMAND, latestConfigs } from "../test/helpers/collector.ts";
import { storeConfig } from "../src/modules/configs/storage/store.ts";
import type { StoreRequest } from "./store-download.ts";
import { startStoreThread, type StoreThread } from "./store-thread.ts";
import { SessionError } from "./session.ts";

let t: TestContext;
let thread: StoreThread;
let deviceId: number;
let templateCode: string;

beforeEach(async () => {
  t = await createTestContext();
  const templateId = await builtinTemplateId(t, "cisco-ios");
  templateCode = (await t.db.select({ code: templates.code }).from(templates).where(eq(templates.id, templateId)))[0]!
    .code;
  deviceId = await addLoopbackDevice(t, await t.token(), { port: 1, templateId });
  thread = startStoreThread(t);
});

afterEach(async () => {
  await thread.close();
  await t.close();
});

async function claimedJob(): Promise<Job> {
  await enqueueDeviceJob(
    t.db,
    { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 },
    new Date(),
  );
  return (await claimNextJob(t.db, "collector-a", new Date(), 60_000))!;
}

const running = [
  "Building configuration...",
  "hostname edge-1",
  "enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",
  "interface Gi0/1",
  " description uplink",
  "end",
  "",
].join("\n");

const versions = () =>
  t.db
    .select({
      id: configs.id,
      version: configs.version,
      significantHash: configs.significantHash,
      size: configs.size,
      seenCount: configs.seenCount,
    })
    .from(configs)
    .where(eq(configs.deviceId, deviceId))
    .orderBy(configs.version);

const request = (job: Job, overrides: Partial<StoreRequest> = {}): StoreRequest => ({
  job,
  owner: "collector-a",
  deviceId,
  templateCode,
  exclusions: [],
  storedHashes: {},
  outputs: [[IOS_CONFIG_COMMAND, running]],
  printed: [],
  fingerprint: "SHA256:test-key",
  snmp: {},
  configChanged: { snmpConfigChangedValue: null, snmpConfigChangedAt: null },
  startedAt: Date.now(),
  now: new Date(),
  ...overrides,
});

describe("the store thread", () => {
  it("stores a download over its own connection: secrets out, job finished, device updated, key pinned", async () => {
    await thread.ready;
    const job = await claimedJob();
    const at = new Date("2026-06-01T12:00:00Z");
    expect(await thread.store(request(job, { now: at }))).toEqual({
      outcome: "success",
      message: "1 of 1 command outputs changed",
      retrying: false,
    });

    const stored = (await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)!;
    expect(stored).toContain("hostname edge-1");
    expect(stored).not.toContain("$1$mERr$hx5rVt7rPNoS4wqbXKX7m0");
    expect(stored).not.toContain("Building configuration");
    expect(await getJob(t.db, job.id)).toMatchObject({ state: "finished", outcome: "success" });
    const [device] = await t.db.select().from(devices).where(eq(devices.id, deviceId));
    expect(device).toMatchObject({
      status: "up",
      hostKeyFingerprint: "SHA256:test-key",
      lastSeenAt: at,
      lastBackupAt: at,
    });
  });

  it("cleans what the shell printed (echo, line endings, trailing blanks) before storing it, and stores any other output as it came", async () => {
    const printed = [`${IOS_CONFIG_COMMAND}  `, ...running.split("\n").map((l) => `${l}  `)].join("\r\n");
    expect(
      await thread.store(
        request(await claimedJob(), { outputs: [[IOS_CONFIG_COMMAND, printed]], printed: [IOS_CONFIG_COMMAND] }),
      ),
    ).toMatchObject({ outcome: "success" });
    const cleaned = (await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)!;
    expect(cleaned.startsWith("hostname edge-1\n")).toBe(true);
    expect(cleaned).not.toMatch(/[\r]| \n/);
    // Printed exactly so again: the same version, one more sighting, found by its hash without cleaning it again.
    expect(
      await thread.store(
        request(await claimedJob(), { outputs: [[IOS_CONFIG_COMMAND, printed]], printed: [IOS_CONFIG_COMMAND] }),
      ),
    ).toMatchObject({ outcome: "unchanged" });
    expect((await versions()).map((v) => [v.version, v.seenCount])).toEqual([[1, 2]]);
    // Not printed by a shell (an exec channel, a file): stored as it came, its first line included.
    const fetched = `${IOS_CONFIG_COMMAND} is not an echo here\n${running}`;
    expect(await thread.store(request(await claimedJob(), { outputs: [[IOS_CONFIG_COMMAND, fetched]] }))).toMatchObject(
      { outcome: "success" },
    );
    expect((await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)).toMatch(
      new RegExp(`^${IOS_CONFIG_COMMAND} is not an echo here\n`),
    );
  });

  it("answers undefined and stores nothing when another collector holds the lease", async () => {
    const job = await claimedJob();
    expect(await thread.store(request(job, { owner: "collector-b" }))).toBeUndefined();
    expect((await latestConfigs(t, deviceId)).size).toBe(0);
    expect(await getJob(t.db, job.id)).toMatchObject({ state: "running", leaseOwner: "collector-a" });
  });

  it("rejects with the reason when storing fails, and goes on storing", async () => {
    const job = await claimedJob();
    await expect(thread.store(request(job, { templateCode: "prompt: [" }))).rejects.toThrow(
      "the device's connection template is invalid",
    );
    expect(await thread.store(request(job))).toMatchObject({ outcome: "success" });
  });

  it.skipIf(process.platform !== "linux")(
    "runs ten steps nicer than the process, so the kernel runs the sessions first",
    async (ctx) => {
      await thread.ready;
      // Field 19 of a task's stat is its nice value; the name before it (in parentheses) may hold spaces.
      const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      const tasks = readdirSync("/proc/self/task").map((tid) =>
        niceOf(readFileSync(`/proc/self/task/${tid}/stat`, "utf8")),
      );
      const own = niceOf(readFileSync("/proc/thread-self/stat", "utf8"));
      if (own === 19) return ctx.skip("the process already runs at the lowest priority: its threads cannot be nicer");
      expect(tasks.filter((nice) => nice === Math.min(19, own + 10))).toHaveLength(1);
    },
  );

  it("frees the write lock it shares with this thread when it ends holding it", async () => {
    await thread.ready;
    // As if the thread had died inside a transaction: the lock still names it.
    Atomics.store(t.threadLock, 0, thread.threadId! + 1);
    await thread.close();
    // This thread's writes take the same lock: held, they would wait for the 60 s turn timeout.
    const started = Date.now();
    await claimedJob();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("with a collector's writes (WAIT_UNTIL_WRITTEN), outwaits another process's lock held past the API's 10 s: the job ends done", {
    timeout: 60_000,
  }, async () => {
    const collectors = startStoreThread({ ...t, writeWait: WAIT_UNTIL_WRITTEN });
    try {
      await collectors.ready;
      const job = await claimedJob();
      const api = await openDatabase(t.config.databaseUrl); // as an API process opens it
      // Another process (an import, storage maintenance) holds the write lock for 11 s.
      const other = createClient({ url: t.config.databaseUrl, timeout: 1000, concurrency: 1 });
      const lock = await other.transaction("write");
      await lock.execute({ sql: "update devices set notes = 'held' where id = ?", args: [deviceId] });
      const held = new Promise<void>((resolve) => setTimeout(() => void lock.commit().then(() => resolve()), 11_000));
      // A write that waits as an API process's do gives up meanwhile, which is what failed collector jobs before.
      const apiWrite = api.db
        .update(devices)
        .set({ notes: "meanwhile" })
        .where(eq(devices.id, deviceId))
        .then(
          () => "written",
          (err) => (isBusy(err) ? "busy" : String(err)),
        );
      const stored = collectors.store(request(job));
      expect(await apiWrite).toBe("busy");
      expect(await stored).toEqual({ outcome: "success", message: "1 of 1 command outputs changed", retrying: false });
      await held;
      other.close();
      api.client.close();
      expect(await getJob(t.db, job.id)).toMatchObject({ state: "finished", outcome: "success" });
      expect((await latestConfigs(t, deviceId)).get(IOS_CONFIG_COMMAND)).toContain("hostname edge-1");
    } finally {
      await collectors.close();
    }
  });

  it("fails the download as output_invalid, storing nothing, when the configuration command printed no configuration", async () => {
    const job = await claimedJob();
    const refused = thread.store(request(job, { outputs: [[IOS_CONFIG_COMMAND, "Building configuration...\n\n"]] }));
    await expect(refused).rejects.toBeInstanceOf(SessionError);
    await expect(refused).rejects.toMatchObject({
      outcome: "output_invalid",
      message: "'show running-config' returned no configuration text; nothing was stored",
    });
    expect((await latestConfigs(t, deviceId)).size).toBe(0);
  });

  it("finds an output identical to the one it last stored unchanged by its hash, and counts the sighting", async () => {
    expect(await thread.store(request(await claimedJob()))).toMatchObject({ outcome: "success" });
    const [first] = await versions();
    const job = await claimedJob();
    expect(
      await thread.store(request(job, { storedHashes: { [IOS_CONFIG_COMMAND]: first!.significantHash } })),
    ).toEqual({ outcome: "unchanged", message: "no configuration change", retrying: false });
    expect((await getJob(t.db, job.id))!.result).toMatchObject({
      verified_by: "output_hash",
      changed: 0,
      config_ids: [first!.id],
      bytes: first!.size,
    });
    expect(await versions()).toEqual([{ ...first, seenCount: 2 }]);
  });

  it("stores an identical output the long way when its rules changed or the latest version is no longer the one it stored", async () => {
    expect(await thread.store(request(await claimedJob()))).toMatchObject({ outcome: "success" });
    const [first] = await versions();
    const stored = { [IOS_CONFIG_COMMAND]: first!.significantHash };
    // A compare exclusion added since: the same output is compared under it.
    const exclusions = [{ pattern: "^ description", ignoreCase: false, command: null }];
    const excluding = await claimedJob();
    expect(await thread.store(request(excluding, { storedHashes: stored, exclusions }))).toMatchObject({
      outcome: "unchanged",
    });
    expect((await getJob(t.db, excluding.id))!.result).not.toHaveProperty("verified_by");
    const [compared] = await versions();
    expect(compared!.significantHash).not.toBe(first!.significantHash);
    // A different configuration is stored (a push's download, an import) after this job read the stored hashes.
    const late = await claimedJob();
    await storeConfig(t.db, {
      deviceId,
      command: IOS_CONFIG_COMMAND,
      text: running.replace("edge-1", "edge-2"),
      significant: (text) => text,
      trigger: "api",
      jobId: null,
      now: new Date(),
    });
    expect(
      await thread.store(
        request(late, { storedHashes: { [IOS_CONFIG_COMMAND]: compared!.significantHash }, exclusions }),
      ),
    ).toMatchObject({ outcome: "success" });
    expect((await versions()).map((v) => v.version)).toEqual([1, 2, 3]);
  });

  it("stores downloads handed over together, each as alone: one whose lease was lost or that printed no configuration leaves the others stored", async () => {
    await thread.ready;
    const token = await t.token();
    const templateId = await builtinTemplateId(t, "cisco-ios");
    const ids = [
      deviceId,
      ...(await Promise.all([2, 3, 4].map((port) => addLoopbackDevice(t, token, { port, templateId })))),
    ];
    for (const id of ids)
      await enqueueDeviceJob(
        t.db,
        { type: "download", deviceId: id, trigger: "api", priority: 50, maxAttempts: 1 },
        new Date(),
      );
    const jobs = new Map<number, Job>();
    for (const _ of ids) {
      const job = (await claimNextJob(t.db, "collector-a", new Date(), 60_000))!;
      jobs.set(job.deviceId!, job);
    }
    const [ok, lost, empty, last] = ids.map((id) => ({ ...request(jobs.get(id)!), deviceId: id }));
    // This thread holds the write lock while they are handed over, so the store thread has them all at once.
    let release!: () => void;
    const held = t.db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    const stored = Promise.allSettled([
      thread.store(ok!),
      thread.store({ ...lost!, owner: "collector-b" }),
      thread.store({ ...empty!, outputs: [[IOS_CONFIG_COMMAND, "Building configuration...\n\n"]] }),
      thread.store(last!),
    ]);
    // Kept as a sleep: the store thread shows nothing of what it has been handed until it can write.
    await new Promise((r) => setTimeout(r, 200));
    release();
    await held;
    const [a, b, c, d] = await stored;
    expect(a).toEqual({
      status: "fulfilled",
      value: { outcome: "success", message: "1 of 1 command outputs changed", retrying: false },
    });
    expect(b).toEqual({ status: "fulfilled", value: undefined });
    expect(c).toMatchObject({ status: "rejected", reason: { outcome: "output_invalid" } });
    expect(d).toEqual(a);
    const storedOf = async (id: number) =>
      (await t.db.select({ id: configs.id }).from(configs).where(eq(configs.deviceId, id))).length;
    expect(await Promise.all(ids.map(storedOf))).toEqual([1, 0, 0, 1]);
    expect(await Promise.all(ids.map(async (id) => (await getJob(t.db, jobs.get(id)!.id))!.state))).toEqual([
      "finished",
      "running",
      "running",
      "finished",
    ]);
  });

  it("starts again after close", async () => {
    await thread.close();
    const job = await claimedJob();
    expect(await thread.store(request(job))).toMatchObject({ outcome: "success" });
  });
});
