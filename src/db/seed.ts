import { eq, sql } from "drizzle-orm";
import type { Clock } from "../clock.ts";
import { BUILTIN_ROLES } from "../auth/roles.ts";
import type { Db } from "./client.ts";
import { categories, roles, vendors } from "./schema/index.ts";
import { seedBuiltinTemplates, type BuiltinTemplate } from "../modules/templates/builtins.ts";
import { seedSystemTasks } from "../modules/tasks/system-tasks.ts";
import { seedBuiltinPolicies } from "../modules/compliance/builtins.ts";

/** The vendor families the built-in connection templates cover. */
const VENDORS = [
  "Cisco", "Juniper", "Arista", "MikroTik", "Fortinet", "Aruba", "HPE", "H3C", "Netgear", "VyOS", "OPNsense", "Netgate", "Linux",
];

/**
 * Idempotent: runs after every migration. Built-in roles are rewritten so a new ability reaches them on
 * upgrade; vendors, the default category and the system tasks are only added when missing, so user edits survive. Built-in
 * connection templates (read from collector/templates/ by the launcher) and built-in compliance policies are
 * rewritten, users' kept.
 */
export async function seedReferenceData(db: Db, clock: Clock, builtinTemplates: readonly BuiltinTemplate[]): Promise<void> {
  const now = clock.now();
  await db.transaction(async (tx) => {
    for (const role of BUILTIN_ROLES) {
      await tx
        .insert(roles)
        .values({ ...role, builtin: true, scopeAll: true, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: sql`lower(${roles.name})`,
          set: { permissions: role.permissions, description: role.description, builtin: true, scopeAll: true, updatedAt: now },
        });
    }
    for (const name of VENDORS) {
      await tx.insert(vendors).values({ name, createdAt: now, updatedAt: now }).onConflictDoNothing();
    }
    const [anyCategory] = await tx.select({ id: categories.id }).from(categories).limit(1);
    if (!anyCategory) {
      await tx.insert(categories).values({ name: "Default", description: "Running configuration", createdAt: now, updatedAt: now });
    }
    await seedBuiltinTemplates(tx, builtinTemplates, now);
    await seedSystemTasks(tx, now);
    await seedBuiltinPolicies(tx, now);
  });
}

export async function roleIdByName(db: Db, name: string): Promise<number | undefined> {
  const [row] = await db.select({ id: roles.id }).from(roles).where(eq(sql`lower(${roles.name})`, name.toLowerCase()));
  return row?.id;
}
