import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import type { Db } from "../../db/client.ts";
import { migrationsFolder } from "../../db/migrate.ts";

let newestMigration: number | undefined;
/** The newest migration this build ships (read once: the files do not change while it runs). */
const shippedMigration = () =>
  (newestMigration ??= Math.max(0, ...readMigrationFiles({ migrationsFolder }).map((m) => m.folderMillis)));

export type Readiness = { ready: true } | { ready: false; message: string };

/** What /readyz answers: the database answers, and holds every migration this build ships. */
export async function readiness(db: Db): Promise<Readiness> {
  let applied: number;
  try {
    const [row] = await db.all<{ last: number | null }>(sql`select max(created_at) as last from __drizzle_migrations`);
    applied = Number(row?.last ?? 0);
  } catch {
    return { ready: false, message: "The database does not answer" };
  }
  if (applied < shippedMigration())
    return {
      ready: false,
      message:
        "The database lacks migrations this release ships: restart the service (it migrates at start) or run svc migrate",
    };
  return { ready: true };
}
