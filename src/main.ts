import { createApp } from "./app.ts";
import { systemClock } from "./kernel/clock.ts";
import { ConfigError, loadConfig } from "./kernel/config.ts";
import { checkpointWal } from "./db/checkpoint.ts";
import { createLogger } from "./kernel/logger.ts";
import { openServices } from "./runtime/services.ts";
import { storageApiDocsFiles } from "./runtime/api-docs-files.ts";
import { drainServer } from "./runtime/drain.ts";
import { listen, ListenError } from "./runtime/listen.ts";
import { createHttpServer } from "./runtime/http-server.ts";
import { AppKeyError } from "./platform/secrets/box.ts";
import { startHealthSchedule } from "./modules/system/index.ts";
import { startTokenExpiryWarnings } from "./platform/auth/token-expiry.ts";
import { startCollectorProcess, type CollectorProcess } from "./runtime/collector-process.ts";
import { stopSignalMeaning } from "./runtime/stop-signal.ts";
import { startLineStoreWarmUp } from "./modules/configs/index.ts";

/** What the port answers between binding it and the app being ready (migrations, seeding): try again shortly. */
const starting = () =>
  new Response(JSON.stringify({ message: "netkeep is starting; try again in a moment" }), {
    status: 503,
    headers: { "content-type": "application/json", "retry-after": "1" },
  });

async function main() {
  const config = loadConfig(process.env);
  // Human lines for a person watching a terminal; JSON lines for anything that collects the log.
  const logger = createLogger(undefined, { level: config.logLevel, human: process.stderr.isTTY === true });
  // The port first: a start that cannot serve (the port taken) stops before it creates storage, a database or
  // the admin user, so the first start that does serve is the one that prints admin's password.
  let serveApp: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;
  const server = createHttpServer((request, env) => (serveApp ? serveApp(request, env) : starting()));
  await listen(server, config.port, config.host);

  const { db, client, secrets } = await openServices(config, logger);
  let collector: CollectorProcess | undefined;
  const app = createApp({
    db,
    config,
    secrets,
    logger,
    jobsQueued: () => collector?.wake(),
    apiDocsFiles: storageApiDocsFiles(config.storageDir),
    clientIp: (c) =>
      (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress,
  });
  serveApp = app.fetch;
  const address = server.address();
  const url =
    address && typeof address === "object"
      ? `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`
      : "";
  logger.info("netkeep API listening", { url });
  const health = startHealthSchedule({ db, config, secrets, clock: systemClock, logger });
  const tokenExpiry = startTokenExpiryWarnings({ db, clock: systemClock, logger });
  // The first searches after a start run from memory too: the latest versions are read in the background.
  const warming = startLineStoreWarmUp(db, logger);
  collector = config.collector ? startCollectorProcess(logger) : undefined;

  let stoppingSince: number | undefined;
  const stop = async (signal: NodeJS.Signals) => {
    const meaning = stopSignalMeaning(stoppingSince, Date.now());
    if (meaning === "same") {
      logger.info("the same stop signal again (forwarded by npm or another wrapper): still stopping", { signal });
      return;
    }
    if (meaning === "force") {
      logger.warn("second signal while stopping: exiting now", { signal });
      process.exit(1);
    }
    stoppingSince = Date.now();
    const deadline = Date.now() + config.shutdownGraceMs;
    logger.info("stopping: no new connections; requests in flight may finish", {
      signal,
      grace_seconds: config.shutdownGraceMs / 1000,
    });
    health.stop();
    tokenExpiry.stop();
    warming.stop();
    // The collector hands back what it has not finished before the deadline (collector/main.ts).
    const [drained, collectorStopped] = await Promise.all([
      drainServer(server, deadline),
      collector?.stop(deadline) ?? true,
    ]);
    client.close();
    // Last, with every connection of this process closed: the database file alone then holds every row.
    const checkpointed = await checkpointWal(config.databaseUrl).catch(() => false);
    if (!checkpointed)
      logger.warn(
        "the database's write-ahead log could not be emptied (another process has it open); copy netkeep.db with svc db:backup, not cp",
      );
    if (!drained || !collectorStopped) {
      logger.error("stopped by force: the grace period ran out", {
        requests_cut: !drained,
        collector_killed: !collectorStopped,
        grace_seconds: config.shutdownGraceMs / 1000,
      });
      process.exit(1);
    }
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof AppKeyError || err instanceof ListenError)
    console.error(`netkeep: ${err.message}`);
  else console.error(`netkeep: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
