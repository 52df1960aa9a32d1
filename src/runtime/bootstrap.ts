import type { Clock } from "../kernel/clock.ts";
import type { Config } from "../kernel/config.ts";
import type { Logger } from "../kernel/logger.ts";
import type { Database } from "../db/client.ts";
import { migrateDatabase } from "./seed.ts";
import type { BuiltinTemplate } from "../modules/templates/index.ts";
import { generatePassword, hashPassword } from "../platform/auth/passwords.ts";
import { countUsers, createUser } from "../platform/auth/users.ts";
import { createSecretBox, parseAppKey, type SecretBox } from "../platform/secrets/box.ts";

/**
 * What every launcher does before serving: migrate and seed, then, on the very first start, create the
 * `admin` user. Returns the generated password (if one was made) so the launcher prints it exactly once.
 */
export async function prepareDatabase(
  { db, location }: Database,
  config: Config,
  clock: Clock,
  builtinTemplates: readonly BuiltinTemplate[],
  logger?: Logger,
): Promise<{ adminPassword?: string }> {
  await migrateDatabase(location, db, clock, builtinTemplates, logger);
  if ((await countUsers(db)) > 0) return {};
  const password = config.adminPassword ?? generatePassword();
  const passwordHash = await hashPassword(password);
  // Counted again inside the write transaction: the API and a collector may start together on a fresh database.
  const created = await db.transaction(async (tx) => {
    if ((await countUsers(tx)) > 0) return false;
    await createUser(tx, { username: "admin", email: "admin@localhost", roleName: "admin", passwordHash }, clock.now());
    return true;
  });
  return created && !config.adminPassword ? { adminPassword: password } : {};
}

export const openSecretBox = (appKey: string): Promise<SecretBox> => createSecretBox(parseAppKey(appKey));
