import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { openServices } from "./runtime/services.ts";
import { storageApiDocsFiles } from "./runtime/api-docs-files.ts";
import { AppKeyError } from "./secrets/box.ts";
import { startHealthSchedule } from "./modules/system/schedule.ts";
import { startCollectorProcess } from "./runtime/collector-process.ts";

async function main() {
  const config = loadConfig(process.env);
  // Human lines for a person watching a terminal; JSON lines for anything that collects the log.
  const logger = createLogger(undefined, { level: config.logLevel, human: process.stderr.isTTY === true });
  const { db, client, secrets } = await openServices(config, logger);

  const app = createApp({
    db, config, secrets, logger,
    apiDocsFiles: storageApiDocsFiles(config.storageDir),
    clientIp: (c) => (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress,
  });
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    logger.info("netkeep API listening", { url: `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}` });
  });
  const health = startHealthSchedule({ db, config, secrets, clock: systemClock, logger });
  const collector = config.collector ? startCollectorProcess(logger) : undefined;

  const stop = () => {
    health.stop();
    collector?.kill("SIGTERM");
    server.close(() => {
      client.close();
      process.exit(0);
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof AppKeyError) console.error(`netkeep: ${err.message}`);
  else console.error(`netkeep: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
