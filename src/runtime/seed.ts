import { eq } from "drizzle-orm";
import type { Clock } from "../kernel/clock.ts";
import { silentLogger, type Logger } from "../kernel/logger.ts";
import { BUILTIN_ROLES } from "../platform/auth/roles.ts";
import type { Db } from "../db/client.ts";
import { applyMigrations, type DatabaseLocation } from "../db/migrate.ts";
import { backfillNameKeys } from "../db/name-key-backfill.ts";
import { nameKey } from "../db/name-key.ts";
import { categories, roles, vendors } from "../db/schema/index.ts";
import { seedBuiltinTemplates, type BuiltinTemplate } from "../modules/templates/index.ts";
import { seedSystemTasks } from "../modules/tasks/index.ts";
import { seedBuiltinPolicies } from "../modules/compliance/index.ts";

/**
 * Applies pending migrations, then brings seeded reference data (built-in roles, vendors, connection
 * templates) up to date, and says how many migrations that took. The launcher reads the built-in templates (src/runtime/builtin-templates.ts).
 * The logger hears about data the upgrade had to settle (names that clash under Unicode case folding).
 */
export async function migrateDatabase(
  location: DatabaseLocation,
  db: Db,
  clock: Clock,
  builtinTemplates: readonly BuiltinTemplate[],
  logger: Logger = silentLogger,
): Promise<{ applied: number }> {
  const applied = await applyMigrations(location);
  await seedReferenceData(db, clock, builtinTemplates, logger);
  return { applied };
}

/**
 * Idempotent: runs after every migration. Built-in roles are rewritten so a new ability reaches them on
 * upgrade; vendors, the default category and the system tasks are only added when missing, so user edits survive. Built-in
 * connection templates (read from collector/templates/ by the launcher) and built-in compliance policies are
 * rewritten, users' kept.
 * First, name keys a migration could not compute are filled in (name-key-backfill.ts): the rest looks names up by key.
 */
export async function seedReferenceData(
  db: Db,
  clock: Clock,
  builtinTemplates: readonly BuiltinTemplate[],
  logger: Logger = silentLogger,
): Promise<void> {
  const now = clock.now();
  await db.transaction(async (tx) => {
    await backfillNameKeys(tx, logger);
    for (const role of BUILTIN_ROLES) {
      await tx
        .insert(roles)
        .values({ ...role, nameKey: nameKey(role.name), builtin: true, scopeAll: true, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: roles.nameKey,
          set: {
            permissions: role.permissions,
            description: role.description,
            builtin: true,
            scopeAll: true,
            updatedAt: now,
          },
        });
    }
    // The vendors the built-in connection templates name (their `vendor` and `also_sold_as`), in file order.
    for (const name of new Set(builtinTemplates.flatMap((t) => t.vendors))) {
      await tx
        .insert(vendors)
        .values({ name, nameKey: nameKey(name), createdAt: now, updatedAt: now })
        .onConflictDoNothing();
    }
    const [anyCategory] = await tx.select({ id: categories.id }).from(categories).limit(1);
    if (!anyCategory) {
      await tx.insert(categories).values({
        name: "Default",
        nameKey: nameKey("Default"),
        description: "Running configuration",
        createdAt: now,
        updatedAt: now,
      });
    }
    await seedBuiltinTemplates(tx, builtinTemplates, now);
    await seedSystemTasks(tx, now);
    await seedBuiltinPolicies(tx, now);
  });
}

export async function roleIdByName(db: Db, name: string): Promise<number | undefined> {
  const [row] = await db
    .select({ id: roles.id })
    .from(roles)
    .where(eq(roles.nameKey, nameKey(name)));
  return row?.id;
}
