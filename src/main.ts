import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { prepareDatabase, openSecretBox } from "./bootstrap.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { createLogger } from "./logger.ts";
import { AppKeyError } from "./secrets/box.ts";
import { ensureStorage } from "./runtime/storage.ts";
import { loadAppKey } from "./runtime/app-key-file.ts";
import { startCollectorProcess } from "./runtime/collector-process.ts";
import { loadBuiltinTemplates } from "./runtime/builtin-templates.ts";

const logger = createLogger();

async function main() {
  const config = loadConfig(process.env);
  ensureStorage(config.storageDir, config.databaseUrl);
  const { db, client } = await openDatabase(config.databaseUrl, config.databaseAuthToken);
  // After opening the database: a key left by an interrupted `svc key:rotate` is settled by trying it on the stored secrets.
  const appKey = await loadAppKey(config, db);
  if (appKey.settled !== "none") logger.warn(`app key: ${appKey.settled === "finished" ? "finished" : "cleaned up after"} an interrupted svc key:rotate`);
  const secrets = await openSecretBox(appKey.key);
  const { adminPassword } = await prepareDatabase(db, config, systemClock, loadBuiltinTemplates());
  if (adminPassword) {
    // Printed once, to the console only: it is never logged or stored in clear.
    console.log(`\nCreated user 'admin' with password: ${adminPassword}\nChange it after your first login.\n`);
  }

  const app = createApp({
    db, config, secrets, logger,
    clientIp: (c) => (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress,
  });
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    logger.info("netkeep API listening", { url: `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}` });
  });
  const collector = config.collector ? startCollectorProcess(logger) : undefined;

  const stop = () => {
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
