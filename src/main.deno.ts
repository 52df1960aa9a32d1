/// <reference lib="deno.ns" />
import { createApp } from "./app.ts";
import { prepareDatabase, openSecretBox } from "./bootstrap.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { createLogger } from "./logger.ts";
import { AppKeyError } from "./secrets/box.ts";
import { ensureStorage } from "./runtime/storage.ts";
import { loadAppKey } from "./runtime/app-key-file.ts";
import { loadBuiltinTemplates } from "./runtime/builtin-templates.ts";

/**
 * The Deno launcher: the same steps as main.ts, served by Deno.serve. It never starts a collector: the
 * collector is a Node process (run `npm run collector` beside it); the two meet only in the database.
 */
const logger = createLogger();

async function main() {
  const config = loadConfig(Deno.env.toObject());
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
  if (config.collector) logger.info("COLLECTOR is ignored under Deno: run `npm run collector` (Node) beside the API");

  const app = createApp({
    db, config, secrets, logger,
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

  const stop = () => {
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
