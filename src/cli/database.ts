import { sql } from "drizzle-orm";
import type { Clock } from "../kernel/clock.ts";
import type { Config } from "../kernel/config.ts";
import { openDatabase, type Database, type Db } from "../db/client.ts";
import { migrateDatabase } from "../runtime/seed.ts";
import { ensureStorage } from "../runtime/storage.ts";
import { loadBuiltinTemplates } from "../runtime/builtin-templates.ts";
import type { BuiltinTemplate } from "../modules/templates/index.ts";

export type MigrationReport = { applied: number; total: number };

/** drizzle's own bookkeeping table; absent until the first migration runs. */
async function countAppliedMigrations(db: Db): Promise<number> {
  const [table] = await db.all<{ name: string }>(
    sql`select name from sqlite_master where type = 'table' and name = '__drizzle_migrations'`,
  );
  if (!table) return 0;
  const [row] = await db.all<{ n: number }>(sql`select count(*) as n from __drizzle_migrations`);
  return Number(row?.n ?? 0);
}

/**
 * Every command starts here, so `svc user:create` works on a fresh checkout: create the storage directory,
 * open the database and bring it up to date, reporting how many migrations that took.
 */
export async function openMigratedDatabase(
  config: Config,
  clock: Clock,
): Promise<Database & { migration: MigrationReport; builtinTemplates: readonly BuiltinTemplate[] }> {
  ensureStorage(config.storageDir, config.databaseUrl);
  const database = await openDatabase(config.databaseUrl, config.databaseAuthToken);
  try {
    const builtinTemplates = loadBuiltinTemplates();
    const { applied } = await migrateDatabase(database.location, database.db, clock, builtinTemplates);
    const total = await countAppliedMigrations(database.db);
    return { ...database, migration: { applied, total }, builtinTemplates };
  } catch (err) {
    database.client.close();
    throw err;
  }
}

/** Where the database is, without credentials a libsql:// or http:// URL may carry. */
export function describeDatabaseUrl(url: string): string {
  return url.replace(/\?.*$/, "").replace(/\/\/[^/@]*@/, "//");
}
