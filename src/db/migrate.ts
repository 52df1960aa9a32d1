import { migrate } from "drizzle-orm/libsql/migrator";
import type { Db } from "./client.ts";
import { seedReferenceData } from "./seed.ts";
import type { Clock } from "../clock.ts";

const migrationsFolder = new URL("../../drizzle", import.meta.url).pathname;

/** Applies pending migrations, then brings seeded reference data (built-in roles, vendors) up to date. */
export async function migrateDatabase(db: Db, clock: Clock): Promise<void> {
  await migrate(db, { migrationsFolder });
  await seedReferenceData(db, clock);
}
