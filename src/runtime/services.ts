import { prepareDatabase, openSecretBox } from "./bootstrap.ts";
import { systemClock } from "../kernel/clock.ts";
import type { Config } from "../kernel/config.ts";
import { openDatabase, type Database } from "../db/client.ts";
import type { WriteWait } from "../db/write-turns.ts";
import type { Logger } from "../kernel/logger.ts";
import type { SecretBox } from "../platform/secrets/box.ts";
import { writeAdminPasswordFile } from "./admin-password-file.ts";
import { loadAppKey } from "./app-key-file.ts";
import { loadBuiltinTemplates } from "./builtin-templates.ts";
import { ensureStorage } from "./storage.ts";

/**
 * What every process does before its real work (API on Node or Deno, collector): create storage, open the
 * database (its writes waiting for other processes' locks as `writeWait` says; by default 10 s), settle the app key, migrate and seed, and on the very first start create `admin`, writing its
 * password to STORAGE_DIR/admin-password (mode 0600), never to the console or the log. `prepared`: the database
 * was migrated and seeded by the process that started this one (DATABASE_PREPARED_ENV); only open it.
 */
/**
 * Set in the environment of the collector an API starts (collector-process.ts): that API migrated and seeded the
 * database just before, so the collector does not again. Seeding loads and parses every built-in template, about
 * half a second of CPU in a fresh process, which each start paid three times over (API, collector, `svc`).
 */
export const DATABASE_PREPARED_ENV = "NETKEEP_DATABASE_PREPARED";

export async function openServices(
  config: Config,
  logger: Logger,
  writeWait?: WriteWait,
  options: { prepared?: boolean } = {},
): Promise<Database & { secrets: SecretBox }> {
  ensureStorage(config.storageDir, config.databaseUrl);
  const database = await openDatabase(config.databaseUrl, config.databaseAuthToken, undefined, writeWait);
  const { db } = database;
  // After opening the database: a key left by an interrupted `svc key:rotate` is settled by trying it on the stored secrets.
  const appKey = await loadAppKey(config, db);
  if (appKey.settled !== "none")
    logger.warn(
      `app key: ${appKey.settled === "finished" ? "finished" : "cleaned up after"} an interrupted svc key:rotate`,
    );
  const secrets = await openSecretBox(appKey.key);
  if (options.prepared) return { ...database, secrets };
  const { adminPassword } = await prepareDatabase(database, config, systemClock, loadBuiltinTemplates(), logger);
  if (adminPassword) {
    const file = writeAdminPasswordFile(config.storageDir, adminPassword);
    console.log(
      `\nCreated user 'admin'; its password is in ${file} (readable only by this user). Log in, change it, then delete the file.\n`,
    );
  }
  return { ...database, secrets };
}
