import { migrate } from "drizzle-orm/libsql/migrator";
import type { Db } from "./client.ts";
import { seedReferenceData } from "./seed.ts";
import type { Clock } from "../clock.ts";
import type { BuiltinTemplate } from "../modules/templates/builtins.ts";

const migrationsFolder = new URL("../../drizzle", import.meta.url).pathname;

/**
 * Applies pending migrations, then brings seeded reference data (built-in roles, vendors, connection
 * templates) up to date. The launcher reads the built-in templates (src/runtime/builtin-templates.ts).
 */
export async function migrateDatabase(db: Db, clock: Clock, builtinTemplates: readonly BuiltinTemplate[]): Promise<void> {
  await migrate(db, { migrationsFolder });
  await seedReferenceData(db, clock, builtinTemplates);
}
