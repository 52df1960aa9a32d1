import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { and, asc, eq, inArray, sql } from "drizzle-orm";

import { hashPassword } from "../src/platform/auth/passwords.ts";
import { createUser } from "../src/platform/auth/users.ts";
import { openSecretBox } from "../src/runtime/bootstrap.ts";
import { systemClock } from "../src/kernel/clock.ts";
import { loadConfig } from "../src/kernel/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/runtime/seed.ts";
import { configs, devices, jobs, policies, policyAssignments, tasks } from "../src/db/schema/index.ts";
import { completeJob, type Job } from "../src/platform/jobs/queue.ts";
import { settleFinishedRuns } from "../src/modules/tasks/settle.ts";

import { evaluatePendingVersions, queueForCompliance } from "../src/modules/compliance/pending.ts";
import { readBlobs } from "../src/modules/configs/storage/blobs.ts";
import { maintainConfigStorage } from "../src/modules/configs/storage/maintenance.ts";
import { indexAllPending } from "../src/modules/configs/search/search-index.ts";
import { digestOutputs, latestVersions, prepareStore, storeConfigs } from "../src/modules/configs/storage/store.ts";
import { createDevices, updateDevices } from "../src/modules/devices/service.ts";
import type { DeviceInputT } from "../src/modules/devices/schemas.ts";
import { dispatchEvents } from "../src/modules/events/dispatch.ts";
import { startTaskRun } from "../src/modules/tasks/start-run.ts";
import { nameKey } from "../src/db/name-key.ts";
import { mulberry32 } from "../src/kernel/random.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { EVENT_CONSUMERS } from "../collector/event-consumers.ts";
import { editRunning, firstRunning, nightOf, RUNNING, showVersion, significantText, VERSION } from "./estate-data.ts";
import { benchDevice } from "./seed.ts";

/**
 * Builds (or resumes) an estate in `dir`: `devices` devices and `days` nights of backups, through the storage
 * functions the collector uses (storeConfigs for a changed download, in batches of downloads per transaction as
 * the store thread writes them; for an unchanged one the rows storeConfigs writes, last-seen time and seen count,
 * and the job's end). Each night is a scheduled run of one "download all" task (startTaskRun: the run, its items,
 * its jobs), its changed versions indexed for search and checked against two policies (the collector's passes),
 * its events dispatched, and a few device edits by a user in the activity log. The same history goes into a git
 * repository beside it (one file per device and command, one commit per night). `estate.json` records the nights
 * done: a build stopped anywhere resumes at the night it was in.
 */

export const BENCH_USER = "bench";
export const BENCH_PASSWORD = "bench-password-1";
const DAY = 86_400_000;
const OWNER = "estate-builder";
const CHANGED_SHARE = 0.05;
const STORE_BATCH = 25;
const UNCHANGED_BATCH = 500;

export type EstateState = {
  appKey: string;
  devices: number;
  days: number;
  bytes: number;
  daysDone: number;
  /** Midnight UTC of night 0; the last night is the one before the build started. */
  base: number;
  taskId: number;
  buildMs: number;
  gitMs: number;
};

const hostOf = (i: number) => `d${String(i).padStart(6, "0")}`;

function git(args: string[], cwd: string) {
  const res = spawnSync("git", args, { cwd, encoding: "utf8", maxBuffer: 1 << 28 });
  if (res.status !== 0) throw new Error(`git ${args.join(" ")}: ${res.stderr}`);
  return res.stdout;
}

export async function buildEstate(
  dir: string,
  want: { devices: number; days: number; bytes: number },
  log: (line: string) => void,
): Promise<EstateState> {
  const stateFile = join(dir, "estate.json");
  const storageDir = join(dir, "storage");
  const gitDir = join(dir, "git");
  let state: EstateState | undefined = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, "utf8")) : undefined;
  if (state && (state.devices !== want.devices || state.bytes !== want.bytes))
    throw new Error(`${dir} holds an estate of ${state.devices} devices (${state.bytes} B): use another --dir`);
  const appKey = state?.appKey ?? generateAppKey();
  const config = loadConfig({ STORAGE_DIR: storageDir, DATABASE_URL: "", APP_KEY: appKey, COLLECTOR: "off" });
  mkdirSync(storageDir, { recursive: true });
  const database = await openDatabase(config.databaseUrl);
  const { db, client } = database;
  const secrets = await openSecretBox(appKey);
  const save = () => writeFileSync(stateFile, JSON.stringify(state, null, 2));

  // Every open, as a start does: a build resumed by newer code gets its migrations.
  await migrateDatabase(database.location, db, systemClock, loadBuiltinTemplates());
  // The seeded system tasks (the nightly backup of every device, the database backup, the retention purge) stay
  // paused, as the estate's own task is: a measurement started after their hour met them as catch-up runs, a
  // download of every device and a copy of the whole database while the requests were timed. The nightly run is
  // measured on its own (bench/estate.ts).
  await db.update(tasks).set({ paused: true }).where(sql`${tasks.systemKey} is not null`);
  if (!state) {
    const began = performance.now();
    const today = Math.floor(Date.now() / DAY) * DAY;
    const base = today - want.days * DAY;
    const created = new Date(base - DAY);
    await createUser(
      db,
      {
        username: BENCH_USER,
        email: "bench@example.test",
        roleName: "admin",
        passwordHash: await hashPassword(BENCH_PASSWORD),
      },
      created,
    );
    // Devices through the bulk create (1,000 a transaction, as POST /devices/bulk): tags, vendors, models. Every
    // address is on loopback with a closed port, so a collector the measurement starts never leaves the machine.
    const next = mulberry32(42);
    for (let start = 0; start < want.devices; start += 1000) {
      const inputs: DeviceInputT[] = Array.from({ length: Math.min(1000, want.devices - start) }, (_, k) => {
        const i = start + k;
        return {
          ...benchDevice(i, next),
          device_name: hostOf(i),
          device_ip: `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
          device_port_override: 9,
        };
      });
      await createDevices(
        { db, secrets, actor: { system: "estate" }, scope: { all: true }, abilities: "all", now: created },
        inputs,
        true,
      );
    }
    // Two policies checked on every backup, over every device; one nightly task over all devices.
    const two = await db.select({ id: policies.id }).from(policies).orderBy(asc(policies.id)).limit(2);
    for (const p of two)
      await db.insert(policyAssignments).values({
        policyId: p.id,
        scope: "all",
        command: RUNNING,
        runOnBackup: true,
        createdAt: created,
        updatedAt: created,
      } as typeof policyAssignments.$inferInsert);
    const [task] = await db
      .insert(tasks)
      .values({
        name: "estate nightly backup",
        nameKey: nameKey("estate nightly backup"),
        type: "download_all",
        cron: "0 2 * * *",
        paused: true,
        scheduleFrom: created,
        createdAt: created,
        updatedAt: created,
      } as typeof tasks.$inferInsert)
      .returning({ id: tasks.id });
    mkdirSync(gitDir, { recursive: true });
    git(["init", "-q"], gitDir);
    git(["config", "user.email", "bench@example.test"], gitDir);
    git(["config", "user.name", "bench"], gitDir);
    git(["config", "gc.auto", "0"], gitDir);
    state = {
      appKey,
      devices: want.devices,
      days: want.days,
      bytes: want.bytes,
      daysDone: 0,
      base,
      taskId: task!.id,
      buildMs: performance.now() - began,
      gitMs: 0,
    };
    save();
    log(
      `  inventory: ${want.devices} devices, 2 policy assignments, 1 nightly task (${(state.buildMs / 1000).toFixed(1)} s)`,
    );
  }
  // A resumed build goes on to the nights asked for now (fewer stops there: the estate keeps what it has).
  state.days = Math.max(state.daysDone, want.days);
  const [task] = await db.select().from(tasks).where(eq(tasks.id, state.taskId));
  const ids = (await db.select({ id: devices.id }).from(devices).orderBy(asc(devices.id))).map((r) => r.id);
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const [user] = await db.all<{ id: number }>(sql`select id from users where username = ${BENCH_USER}`);
  const releases = new Map<number, number>();

  for (let day = state.daysDone; day < state.days; day++) {
    const began = performance.now();
    const now = new Date(state.base + day * DAY + 2 * 3_600_000);
    await db.transaction((tx) => startTaskRun(tx, task!, { trigger: "schedule", scheduledFor: now }, now));
    const fanOutMs = performance.now() - began;
    // What claims would take, all at once (a resumed night also takes back its own running jobs).
    const claimed = await db.all<Job>(sql`update ${jobs} set state = 'running', lease_owner = ${OWNER},
      lease_expires_at = ${now.getTime() + 3_600_000}, attempts = attempts + 1
      where type = 'download' and (state = 'queued' or (state = 'running' and lease_owner = ${OWNER}))
      returning id, device_id as deviceId, attempts, max_attempts as maxAttempts`);
    const changed: Job[] = [];
    const unchanged: Job[] = [];
    for (const j of claimed)
      (nightOf(indexOf.get(j.deviceId!)!, day, CHANGED_SHARE).changed ? changed : unchanged).push(j);
    const gitFiles: [string, string][] = [];

    for (let from = 0; from < changed.length; from += STORE_BATCH) {
      const batch = changed.slice(from, from + STORE_BATCH);
      const prepared = await Promise.all(
        batch.map(async (job) => {
          const i = indexOf.get(job.deviceId!)!;
          const night = nightOf(i, day, CHANGED_SHARE);
          const latest = await latestVersions(db, job.deviceId!, [RUNNING]);
          const previous = latest.get(RUNNING);
          const before = previous ? (await readBlobs(db, [previous.blobHash])).get(previous.blobHash)! : undefined;
          const running = before === undefined ? firstRunning(i, state!.bytes) : editRunning(before, i, day);
          const release = (releases.get(i) ?? 0) + (night.upgraded ? 1 : 0);
          if (night.upgraded) releases.set(i, release);
          const texts: [string, string][] = [[RUNNING, running]];
          if (day === 0 || night.upgraded) texts.push([VERSION, showVersion(i, day, release)]);
          for (const [command, text] of texts)
            gitFiles.push([`${hostOf(i)}${command === RUNNING ? "" : ".version"}.txt`, text]);
          const outputs = await digestOutputs(
            texts.map(([command, text]) => ({ command, text })),
            significantText,
          );
          return {
            job,
            input: await prepareStore(db, {
              deviceId: job.deviceId!,
              outputs,
              significant: significantText,
              trigger: "schedule",
              jobId: job.id,
              now,
              onNewVersions: queueForCompliance,
            }),
          };
        }),
      );
      await db.transaction(async (tx) => {
        for (const p of prepared) {
          await tx.transaction(async (sp) => {
            const results = await storeConfigs(sp, p.input);
            await completeJob(
              sp,
              p.job,
              OWNER,
              { outcome: "success", result: { config_ids: results.map((r) => r.configId) } },
              now,
            );
          });
        }
      });
    }
    for (let from = 0; from < unchanged.length; from += UNCHANGED_BATCH) {
      const batch = unchanged.slice(from, from + UNCHANGED_BATCH);
      const deviceIds = JSON.stringify(batch.map((j) => j.deviceId));
      await db.transaction(async (tx) => {
        // storeConfigs' unchanged path: the latest version of each command seen once more.
        await tx.run(sql`update ${configs} set last_seen_at = ${now.getTime()}, seen_count = seen_count + 1
          where device_id in (select value from json_each(${deviceIds})) and significant_hash != ''`);
        await tx
          .update(jobs)
          .set({ state: "finished", outcome: "unchanged", leaseOwner: null, leaseExpiresAt: null, finishedAt: now })
          .where(
            and(
              inArray(
                jobs.id,
                batch.map((j) => j.id),
              ),
              eq(jobs.leaseOwner, OWNER),
            ),
          );
      });
    }
    await settleFinishedRuns(db, now);
    // The collector's passes after a backup: search index, compliance, events.
    await indexAllPending(db);
    while ((await evaluatePendingVersions(db, 200, now)).taken);
    while (await dispatchEvents(db, EVENT_CONSUMERS, now));
    // A user edits a few devices a day (activity log).
    const edits = ids.filter((_, i) => (i * 2_654_435_761 + day) % 1000 === 0).slice(0, 50);
    if (edits.length)
      await updateDevices(
        {
          db,
          secrets,
          actor: { userId: user!.id, username: BENCH_USER, tokenId: null, tokenName: "web session", ip: "127.0.0.1" },
          scope: { all: true },
          abilities: "all",
          now,
        },
        edits.map((id) => ({ id, notes: `checked on night ${day}` })),
        false,
        true,
      );
    const storedMs = performance.now() - began;

    const gitBegan = performance.now();
    for (const [name, text] of gitFiles) writeFileSync(join(gitDir, name), text);
    git(["add", "-A"], gitDir);
    spawnSync("git", ["commit", "-q", "--allow-empty", "-m", `night ${day}`, `--date=${now.toISOString()}`], {
      cwd: gitDir,
    });
    state.gitMs += performance.now() - gitBegan;
    state.buildMs += storedMs;
    state.daysDone = day + 1;
    save();
    log(
      `  night ${day + 1}/${state.days}: ${claimed.length} jobs (${changed.length} changed), fan-out ${fanOutMs.toFixed(0)} ms, stored in ${(storedMs / 1000).toFixed(1)} s; git ${((performance.now() - gitBegan) / 1000).toFixed(1)} s`,
    );
  }
  client.close();
  return state;
}

/** The storage maintenance the nightly retention task runs (learned index tokens, free pages), once at the end. */
export async function maintainEstate(dir: string, appKey: string): Promise<void> {
  const config = loadConfig({ STORAGE_DIR: join(dir, "storage"), DATABASE_URL: "", APP_KEY: appKey, COLLECTOR: "off" });
  const { db, client } = await openDatabase(config.databaseUrl);
  await maintainConfigStorage(db);
  await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  client.close();
}

export { hostOf };
