/// <reference lib="deno.ns" />
import { createApp } from "./app.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { openServices } from "./runtime/services.ts";
import { storageApiDocsFiles } from "./runtime/api-docs-files.ts";
import { AppKeyError } from "./secrets/box.ts";
import { startHealthSchedule } from "./modules/system/schedule.ts";

/**
 * The Deno launcher: the same steps as main.ts, served by Deno.serve. It never starts a collector: the
 * collector is a Node process (run `npm run collector` beside it); the two meet only in the database.
 */
async function main() {
  const config = loadConfig(Deno.env.toObject());
  const logger = createLogger(undefined, { level: config.logLevel, human: Deno.stderr.isTerminal() });
  const { db, client, secrets } = await openServices(config, logger);
  if (config.collector) logger.info("COLLECTOR is ignored under Deno: run `npm run collector` (Node) beside the API");

  const app = createApp({
    db, config, secrets, logger,
    apiDocsFiles: storageApiDocsFiles(config.storageDir),
    // Deno.serve hands its ServeHandlerInfo to app.fetch as the env, so it is c.env here.
    clientIp: (c) => (c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr?.hostname,
  });
  const server = Deno.serve({
    port: config.port,
    hostname: config.host,
    onListen: ({ hostname, port }) => {
      logger.info("netkeep API listening", { url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}` });
    },
  }, app.fetch);

  const health = startHealthSchedule({ db, config, secrets, clock: systemClock, logger });
  const stop = () => {
    health.stop();
    setTimeout(() => Deno.exit(0), 5000);
    server.shutdown().finally(() => {
      client.close();
      Deno.exit(0);
    });
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof AppKeyError) console.error(`netkeep: ${err.message}`);
  else console.error(`netkeep: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  Deno.exit(1);
});
