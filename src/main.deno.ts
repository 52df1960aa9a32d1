/// <reference lib="deno.ns" />
import { createApp } from "./app.ts";
import { systemClock } from "./kernel/clock.ts";
import { ConfigError, loadConfig } from "./kernel/config.ts";
import { checkpointWal } from "./db/checkpoint.ts";
import { createLogger } from "./kernel/logger.ts";
import { openServices } from "./runtime/services.ts";
import { storageApiDocsFiles } from "./runtime/api-docs-files.ts";
import { AppKeyError } from "./platform/secrets/box.ts";
import { startHealthSchedule } from "./modules/system/index.ts";
import { startTokenExpiryWarnings } from "./platform/auth/token-expiry.ts";
import { startLineStoreWarmUp } from "./modules/configs/index.ts";
import { stopSignalMeaning } from "./runtime/stop-signal.ts";

/**
 * The Deno launcher: the same steps as main.ts, served by Deno.serve. It never starts a collector: the
 * collector is a Node process (run `npm run collector` beside it); the two meet only in the database.
 */
async function main() {
  const config = loadConfig(Deno.env.toObject());
  // Lines are written as they come: Deno does not run Node's exit handlers, where the default writer writes its last.
  const logger = createLogger((line) => console.error(line), {
    level: config.logLevel,
    human: Deno.stderr.isTerminal(),
  });
  // The port first, as main.ts does: a start that cannot serve creates nothing. Until the app is ready, 503.
  let serveApp:
    | ((request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Response | Promise<Response>)
    | undefined;
  const server = Deno.serve(
    {
      port: config.port,
      hostname: config.host,
      onListen: () => {},
    },
    (request, info) =>
      serveApp
        ? serveApp(request, info)
        : Response.json(
            { message: "netkeep is starting; try again in a moment" },
            { status: 503, headers: { "retry-after": "1" } },
          ),
  );

  const { db, client, secrets } = await openServices(config, logger);
  if (config.collector) logger.info("COLLECTOR is ignored under Deno: run `npm run collector` (Node) beside the API");
  const app = createApp({
    db,
    config,
    secrets,
    logger,
    apiDocsFiles: storageApiDocsFiles(config.storageDir),
    // Deno.serve hands its ServeHandlerInfo to app.fetch as the env, so it is c.env here.
    clientIp: (c) => (c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr?.hostname,
  });
  serveApp = (request, info) => app.fetch(request, info);
  const { hostname, port } = server.addr;
  logger.info("netkeep API listening", {
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
  });

  const health = startHealthSchedule({ db, config, secrets, clock: systemClock, logger });
  const tokenExpiry = startTokenExpiryWarnings({ db, clock: systemClock, logger });
  const warming = startLineStoreWarmUp(db, logger);
  let stoppingSince: number | undefined;
  // As main.ts: requests in flight get SHUTDOWN_GRACE_SECONDS, then the WAL is emptied; exit 1 when forced.
  const stop = async () => {
    const meaning = stopSignalMeaning(stoppingSince, Date.now());
    if (meaning === "same") {
      logger.info("the same stop signal again (forwarded by deno task or another wrapper): still stopping");
      return;
    }
    if (meaning === "force") {
      logger.warn("second signal while stopping: exiting now");
      Deno.exit(1);
    }
    stoppingSince = Date.now();
    logger.info("stopping: no new connections; requests in flight may finish", {
      grace_seconds: config.shutdownGraceMs / 1000,
    });
    health.stop();
    tokenExpiry.stop();
    warming.stop();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      server.shutdown().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), config.shutdownGraceMs))),
    ]);
    clearTimeout(timer);
    client.close();
    await checkpointWal(config.databaseUrl).catch(() => false);
    if (!drained) {
      logger.error("stopped by force: the grace period ran out", { grace_seconds: config.shutdownGraceMs / 1000 });
      Deno.exit(1);
    }
    logger.info("stopped");
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof AppKeyError) console.error(`netkeep: ${err.message}`);
  else if (err instanceof Deno.errors.AddrInUse)
    console.error(
      `netkeep: cannot listen on ${Deno.env.get("HOST") ?? "127.0.0.1"}:${Deno.env.get("PORT") ?? 3000}: the address is already in use`,
    );
  else console.error(`netkeep: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  Deno.exit(1);
});
