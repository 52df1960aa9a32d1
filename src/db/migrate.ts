import { readMigrationFiles } from "drizzle-orm/migrator";
import { openClient } from "./driver.ts";
import { retryTransient } from "./remote-retry.ts";

export const migrationsFolder = new URL("../../drizzle", import.meta.url).pathname;
/** drizzle-kit's bookkeeping table, kept so `drizzle-kit` tooling still reads what was applied. */
const MIGRATIONS_TABLE = "__drizzle_migrations";

export type DatabaseLocation = { url: string; authToken?: string };

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
export async function applyMigrations(
  { url, authToken }: DatabaseLocation,
  folder = migrationsFolder,
): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  if (!url.startsWith("file:")) return applyOnServer({ url, authToken }, migrations);
  const client = await openClient({ url, authToken, concurrency: 1, timeout: 60_000 });
  try {
    await client.execute("PRAGMA foreign_keys = OFF");
    const tx = await client.transaction("write");
    try {
      await tx.execute(CREATE_MIGRATIONS_TABLE);
      const { rows } = await tx.execute(LAST_APPLIED);
      const lastApplied = rows[0] ? Number(rows[0].created_at) : undefined;
      const pending = migrations.filter((m) => lastApplied === undefined || lastApplied < m.folderMillis);
      for (const migration of pending) {
        for (const statement of migration.sql) {
          if (statement.trim()) await tx.execute(statement);
        }
        await tx.execute(recordApplied(migration));
      }
      if (pending.length > 0) {
        const { rows: broken } = await tx.execute("PRAGMA foreign_key_check");
        if (broken.length > 0)
          throw new Error(`a migration left ${broken.length} rows whose references point nowhere; nothing was applied`);
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

type Migration = ReturnType<typeof readMigrationFiles>[number];
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`;
const LAST_APPLIED = `SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`;
const recordApplied = (migration: Migration) => ({
  sql: `INSERT INTO ${MIGRATIONS_TABLE} ("hash", "created_at") VALUES (?, ?)`,
  args: [migration.hash, migration.folderMillis],
});
/** How long a process starting on a server waits for another's migration (or a busy server) before it gives up. */
const SERVER_MIGRATION_WAIT_MS = 60_000;

/**
 * The same on a libSQL server, where each request is a stream of its own: a PRAGMA sent alone does not reach
 * the statements sent after it, and a transaction cannot read, decide and write across requests without the
 * PRAGMA. So the pending migrations go as one batch through the client's migrate(), which sends
 * `PRAGMA foreign_keys=off`, BEGIN, the statements, COMMIT and `foreign_keys=on` in one stream. The batch's first
 * statement checks that the last applied migration is still the one read; if another process applied some
 * meanwhile it fails, nothing is applied, and the pending list is read again. Its last statement fails it when
 * a migration left broken references. SQLITE_BUSY (another process migrating) is waited out (retryTransient).
 */
async function applyOnServer(location: DatabaseLocation, migrations: Migration[]): Promise<number> {
  const client = await openClient(location);
  // SQLite has no statement that fails on a condition outside a trigger; json() of text that is not JSON does.
  const failWhen = (condition: string, why: string) => `SELECT CASE WHEN ${condition} THEN json('${why}') END`;
  try {
    await retryTransient(() => client.execute(CREATE_MIGRATIONS_TABLE), SERVER_MIGRATION_WAIT_MS);
    for (;;) {
      const { rows } = await retryTransient(() => client.execute(LAST_APPLIED), SERVER_MIGRATION_WAIT_MS);
      const lastApplied = rows[0] ? Number(rows[0].created_at) : undefined;
      const pending = migrations.filter((m) => lastApplied === undefined || lastApplied < m.folderMillis);
      if (!pending.length) return 0;
      const statements = [
        { sql: failWhen(`(${LAST_APPLIED}) IS NOT ?`, "applied meanwhile"), args: [lastApplied ?? null] },
        ...pending.flatMap((m) => [...m.sql.filter((s) => s.trim()), recordApplied(m)]),
        failWhen("EXISTS (SELECT 1 FROM pragma_foreign_key_check)", "broken references"),
      ];
      try {
        await retryTransient(() => client.migrate(statements), SERVER_MIGRATION_WAIT_MS);
        return pending.length;
      } catch (err) {
        const index = (err as { statementIndex?: number }).statementIndex;
        if (index === 0) continue; // another process migrated first: read again
        if (index === statements.length - 1)
          throw new Error("a migration left rows whose references point nowhere; nothing was applied");
        throw err;
      }
    }
  } finally {
    client.close();
  }
}
