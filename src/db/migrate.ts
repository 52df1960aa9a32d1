import { readMigrationFiles } from "drizzle-orm/migrator";
import type { Db } from "./client.ts";
import { openClient } from "./driver.ts";
import { seedReferenceData } from "./seed.ts";
import type { Clock } from "../clock.ts";
import { silentLogger, type Logger } from "../logger.ts";
import type { BuiltinTemplate } from "../modules/templates/builtins.ts";

export const migrationsFolder = new URL("../../drizzle", import.meta.url).pathname;
/** drizzle-kit's bookkeeping table, kept so `drizzle-kit` tooling still reads what was applied. */
const MIGRATIONS_TABLE = "__drizzle_migrations";

export type DatabaseLocation = { url: string; authToken?: string };

/**
 * Applies pending migrations, then brings seeded reference data (built-in roles, vendors, connection
 * templates) up to date, and says how many migrations that took. The launcher reads the built-in templates (src/runtime/builtin-templates.ts).
 * The logger hears about data the upgrade had to settle (names that clash under Unicode case folding).
 */
export async function migrateDatabase(
  location: DatabaseLocation, db: Db, clock: Clock, builtinTemplates: readonly BuiltinTemplate[], logger: Logger = silentLogger,
): Promise<{ applied: number }> {
  const applied = await applyMigrations(location);
  await seedReferenceData(db, clock, builtinTemplates, logger);
  return { applied };
}

/**
 * drizzle's own migrator reads which migrations are applied before it takes the write lock, so two processes
 * starting on a fresh database (the API and a collector, or two `svc` commands) both apply the first migration
 * and one fails with "table already exists". Here the check and the migration run in one BEGIN IMMEDIATE
 * transaction: the second process waits, then finds nothing pending.
 *
 * It runs on its own single-connection client because foreign keys must be off (they cannot be switched inside
 * a transaction) for drizzle-kit's table rebuilds: with them on, the DROP TABLE of a rebuild deletes every
 * row that references the table through ON DELETE CASCADE. Returns how many migrations it applied. `folder` is
 * for tests that build a database as an older release left it.
 */
export async function applyMigrations({ url, authToken }: DatabaseLocation, folder = migrationsFolder): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  const client = await openClient({ url, authToken, concurrency: 1, ...(url.startsWith("file:") ? { timeout: 60_000 } : {}) });
  try {
    await client.execute("PRAGMA foreign_keys = OFF");
    const tx = await client.transaction("write");
    try {
      await tx.execute(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
      const { rows } = await tx.execute(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`);
      const lastApplied = rows[0] ? Number(rows[0].created_at) : undefined;
      const pending = migrations.filter((m) => lastApplied === undefined || lastApplied < m.folderMillis);
      for (const migration of pending) {
        for (const statement of migration.sql) {
          if (statement.trim()) await tx.execute(statement);
        }
        await tx.execute({
          sql: `INSERT INTO ${MIGRATIONS_TABLE} ("hash", "created_at") VALUES (?, ?)`,
          args: [migration.hash, migration.folderMillis],
        });
      }
      if (pending.length > 0) {
        const { rows: broken } = await tx.execute("PRAGMA foreign_key_check");
        if (broken.length > 0) throw new Error(`a migration left ${broken.length} rows whose references point nowhere; nothing was applied`);
      }
      await tx.commit();
      return pending.length;
    } finally {
      tx.close();
    }
  } finally {
    client.close();
  }
}
