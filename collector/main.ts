import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { systemClock } from "../src/kernel/clock.ts";
import { ConfigError, loadConfig } from "../src/kernel/config.ts";
import { createLogger, type Logger } from "../src/kernel/logger.ts";
import { DATABASE_PREPARED_ENV, openServices } from "../src/runtime/services.ts";
import { WAIT_UNTIL_WRITTEN } from "../src/db/write-turns.ts";
import { checkpointWal } from "../src/db/checkpoint.ts";
import { AppKeyError } from "../src/platform/secrets/box.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "./worker.ts";
import { startScheduler } from "./scheduler.ts";
import { DEFAULT_INDEXER_OPTIONS, startSearchIndexer } from "./indexer.ts";
import { startStoreThread } from "./store-thread.ts";
import { DEFAULT_COMPLIANCE_PASS_OPTIONS, startCompliancePass } from "./compliance-pass.ts";
import { onParentMessage, watchParent } from "./parent-watch.ts";
import { JOBS_QUEUED } from "../src/runtime/collector-process.ts";
import { DEFAULT_DISPATCHER_OPTIONS, startEventDispatcher } from "./event-dispatcher.ts";
import { EVENT_CONSUMERS } from "./event-consumers.ts";
import { startHeartbeat } from "./heartbeat.ts";
import { startSyslogService } from "./syslog/service.ts";
import packageJson from "../package.json" with { type: "json" };

// Hundreds of sessions each leave ~100 KB strings behind them, and V8's default lets the heap double past what
// is live before a full collection: at 500 sessions that was 430-490 MB of mostly garbage. Growing by 40% keeps
// it near 330 MB at the same CPU (bench:collect). It is read at every collection, so setting it here is enough.
setFlagsFromString("--heap-growing-percent=40");

// Replaced once main() has read LOG_LEVEL; until then (and for the parent watch below) the default level.
let logger: Logger = createLogger(undefined, { human: process.stderr.isTTY === true });

/** Before the end of the shutdown grace period (SHUTDOWN_GRACE_SECONDS), the time kept to hand back jobs and exit. */
const HAND_BACK_MARGIN_MS = 3000;

/**
 * The collector process: device I/O apart from the API. Any number may run against one database; each
 * identifies itself by host, pid and a random suffix in the leases it takes.
 */
async function main() {
  const config = loadConfig(process.env);
  logger = createLogger(undefined, { level: config.logLevel, human: process.stderr.isTTY === true });
  // Migrates too, so a collector started on its own (or first) finds the schema it needs; one an API started finds
  // it migrated and seeded by that API (DATABASE_PREPARED_ENV).
  // No write of a collector gives up on another process's lock: a busy database delays a job, never fails it.
  const { db, client, secrets, location, threadLock, writeWait } = await openServices(
    config,
    logger,
    WAIT_UNTIL_WRITTEN,
    { prepared: process.env[DATABASE_PREPARED_ENV] === "1" },
  );
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const storeThread = startStoreThread({ location, threadLock, writeWait });
  await storeThread.ready;
  const backups = { databaseUrl: config.databaseUrl, storageDir: config.storageDir };
  const worker = startWorker(
    { db, secrets, clock: systemClock, logger, owner, store: storeThread.store, backups, consumers: EVENT_CONSUMERS },
    {
      ...DEFAULT_WORKER_OPTIONS,
      concurrency: config.collectorConcurrency,
      leaseMs: config.collectorLeaseMs,
      jobTimeLimitMs: config.collectorJobTimeLimitMs,
      pollIntervalMs: Math.min(DEFAULT_WORKER_OPTIONS.pollIntervalMs, config.collectorLeaseMs / 4),
    },
  );
  // A run started through the API starts its jobs now, not up to a poll interval later (0.5 s on average).
  onParentMessage(JOBS_QUEUED, () => worker.wake());
  const heartbeat = startHeartbeat(
    { db, clock: systemClock, logger },
    {
      owner,
      host: hostname(),
      pid: process.pid,
      version: packageJson.version,
      concurrency: config.collectorConcurrency,
      startedAt: systemClock.now(),
    },
  );
  // Every collector schedules: task runs are keyed by (task, slot) in the database, so only one starts each.
  const scheduler = startScheduler({ db, clock: systemClock, logger, passed: heartbeat.schedulerPassed });
  const indexer = startSearchIndexer(
    { db, clock: systemClock, logger },
    { ...DEFAULT_INDEXER_OPTIONS, busy: () => worker.active > 0, waiting: () => worker.waiting },
  );
  const compliancePass = startCompliancePass(
    { db, clock: systemClock, logger },
    { ...DEFAULT_COMPLIANCE_PASS_OPTIONS, busy: () => worker.active > 0 },
  );
  // The syslog receiver runs in the collector, not the API: collectors sit next to the devices that send syslog
  // (the API may run far away, on Deno, or several times over), and it only writes jobs, as the scheduler does.
  const syslog = startSyslogService(
    { db, clock: systemClock, logger, queued: () => worker.wake() },
    {
      owner,
      host: hostname(),
      pid: process.pid,
      version: packageJson.version,
      concurrency: config.collectorConcurrency,
      startedAt: systemClock.now(),
    },
  );
  const dispatcher = startEventDispatcher(
    { db, clock: systemClock, logger, consumers: EVENT_CONSUMERS, dispatched: () => worker.wake() },
    DEFAULT_DISPATCHER_OPTIONS,
  );
  logger.info("collector started", { owner, concurrency: config.collectorConcurrency });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    // Jobs still running near the end of the grace period go back to the queue, their leases cleared, so another
    // collector takes them at once; the margin leaves time to do so and exit before the API (or Docker, or
    // systemd) ends the grace period by force.
    const grace = config.shutdownGraceMs;
    const handBackAt = Date.now() + grace - Math.min(HAND_BACK_MARGIN_MS, grace / 2);
    logger.info("collector stopping; finishing the jobs in hand", {
      active: worker.active,
      grace_seconds: grace / 1000,
    });
    await scheduler.stop();
    await syslog.stop();
    await indexer.stop();
    await compliancePass.stop();
    await dispatcher.stop();
    const handedBack = await worker.stop(handBackAt);
    if (handedBack)
      logger.warn("handed back to the queue the jobs that did not finish within the grace period", {
        jobs: handedBack,
      });
    await heartbeat.stop();
    await storeThread.close();
    client.close();
    // The API checkpoints when it stops; this one matters when the collector runs on its own (compose, systemd).
    await checkpointWal(config.databaseUrl, 1000).catch(() => false);
    logger.info("collector stopped");
    process.exit(0);
  };
  stopCollector = stop;
}

/** Until main() has something to finish, there is nothing to lose by exiting at once (cleanly: 0). */
let stopCollector: () => Promise<void> | void = () => process.exit(0);
// Handled before main() starts, so a collector stopped (or whose API is killed) while it is still starting
// exits cleanly too.
process.on("SIGTERM", () => void stopCollector());
process.on("SIGINT", () => void stopCollector());
watchParent(() => {
  logger.warn("the API that started this collector is gone; stopping");
  void stopCollector();
});

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof AppKeyError) console.error(`netkeep collector: ${err.message}`);
  else console.error(`netkeep collector: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
