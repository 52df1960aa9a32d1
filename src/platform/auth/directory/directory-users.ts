import { eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { nameKey } from "../../../db/name-key.ts";
import { roles, users } from "../../../db/schema/index.ts";
import type { Logger } from "../../../kernel/logger.ts";
import { recordActivity, type Actor } from "../../audit/record.ts";
import { recordEvent } from "../../outbox/record.ts";
import { MAIN_DIRECTORY } from "../../settings/schema.ts";
import { getSettings, ldapBindPassword, ldapDirectoryPasswords } from "../../settings/service.ts";
import type { SecretBox } from "../../secrets/box.ts";
import { endUserSessions } from "../sessions.ts";
import {
  checkDirectoryPassword,
  DirectoryError,
  lookUpDirectoryUser,
  roleForGroups,
  type DirectoryConfig,
  type DirectoryUser,
} from "./ldap.ts";

/** What directory work needs from the app. */
export type DirectoryDeps = { db: Db; secrets: SecretBox; logger: Logger };

/** A directory user has no local password: a hash in no scheme verifyPassword knows, so none ever matches. */
export const NO_LOCAL_PASSWORD = "!directory";

/** Where an account's identity and groups come from, other than a local password. */
export type ExternalSource = "ldap" | "oidc";

/** The enabled directories in the order sign-in tries them, and how long a user's groups are trusted. */
export type Directories = { configs: DirectoryConfig[]; refreshMinutes: number };

/**
 * Every enabled directory with its bind password, in order: the main one (the ldap section's own fields), then
 * ldap.directories as listed. Null when none is enabled (directory sign-in is off).
 */
export async function directoryConfigs(deps: DirectoryDeps): Promise<Directories | null> {
  const { settings } = await getSettings(deps.db);
  const { directories, group_refresh_minutes, ...main } = settings.ldap;
  const configs: DirectoryConfig[] = [];
  if (main.enabled)
    configs.push({ ...main, name: MAIN_DIRECTORY, bindPassword: await ldapBindPassword(deps.db, deps.secrets) });
  const passwords = directories.some((d) => d.enabled) ? await ldapDirectoryPasswords(deps.db, deps.secrets) : {};
  for (const { has_bind_password: _, ...d } of directories)
    if (d.enabled) configs.push({ ...d, bindPassword: passwords[d.name] ?? null });
  return configs.length ? { configs, refreshMinutes: group_refresh_minutes } : null;
}

/**
 * The first directory whose user_filter finds the name, with the entry: sign-in and every re-read ask the same
 * one, so the same name in two directories is always the earlier one's. A directory that cannot be asked stops
 * the search (DirectoryError): a later one must not answer for a name the earlier one might hold.
 */
async function findInDirectories(
  deps: DirectoryDeps,
  configs: DirectoryConfig[],
  username: string,
): Promise<{ config: DirectoryConfig; user: DirectoryUser } | null> {
  for (const config of configs) {
    const user = await lookUpDirectoryUser(config, deps.logger, username);
    if (user) return { config, user };
  }
  return null;
}

async function roleIdOf(tx: DbOrTx, name: string): Promise<{ id: number; name: string } | undefined> {
  const [role] = await tx
    .select({ id: roles.id, name: roles.name })
    .from(roles)
    .where(eq(roles.nameKey, nameKey(name)));
  return role;
}

/** A placeholder e-mail for a directory entry without one: unique per username, and plainly not an address. */
const emailFor = (username: string, found: string | null) => found ?? `${username.toLowerCase()}@directory.invalid`;

/**
 * Makes the local record follow the directory (or the single sign-on provider's group claim): creates it on a first sign-in, sets the role the groups give
 * (or disables the account when they give none), and records every change of role in the activity log and as
 * a `user.role_mapped` event. Returns the user's id and whether they may go on.
 */
export async function applyDirectoryGroups(
  db: Db,
  username: string,
  found: Omit<DirectoryUser, "dn">,
  groupRoles: Record<string, string>,
  now: Date,
  source: ExternalSource = "ldap",
): Promise<{ userId: number | null; refusal?: Refusal }> {
  const DIRECTORY_ACTOR: Actor = { system: source };
  const roleName = roleForGroups(found.groups, groupRoles);
  return db.transaction(async (tx) => {
    const [existing] = await tx
      .select({
        id: users.id,
        enabled: users.enabled,
        roleId: users.roleId,
        authSource: users.authSource,
        username: users.username,
      })
      .from(users)
      .where(eq(users.usernameKey, nameKey(username)));
    const role = roleName ? await roleIdOf(tx, roleName) : undefined;
    if (!existing) {
      if (!role) return { userId: null, refusal: "no group mapped to a role" };
      // An address another account already has (e-mails are unique) gives way to the placeholder.
      const [taken] = found.email
        ? await tx
            .select({ id: users.id })
            .from(users)
            .where(eq(users.emailKey, nameKey(found.email)))
        : [];
      const email = emailFor(username, taken ? null : found.email);
      const [row] = await tx
        .insert(users)
        .values({
          username,
          usernameKey: nameKey(username),
          email,
          emailKey: nameKey(email),
          roleId: role.id,
          passwordHash: NO_LOCAL_PASSWORD,
          authSource: source,
          directoryCheckedAt: now,
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: users.id });
      const userId = row!.id;
      await recordActivity(
        tx,
        DIRECTORY_ACTOR,
        {
          action: "user.create",
          subjectType: "user",
          subjectId: userId,
          before: null,
          after: { username, role: role.name, auth_source: source, groups: found.groups },
        },
        now,
      );
      await recordEvent(
        tx,
        "user.role_mapped",
        { user_id: userId, username, old_role: null, new_role: role.name, groups: found.groups },
        now,
      );
      return { userId };
    }
    if (existing.authSource !== source)
      return { userId: existing.id, refusal: source === "ldap" ? "not a directory user" : "not a single sign-on user" };
    const [current] = await tx.select({ name: roles.name }).from(roles).where(eq(roles.id, existing.roleId));
    const oldRole = current?.name ?? null;
    if (!existing.enabled) return { userId: existing.id, refusal: "disabled user" };
    if (!role) {
      // A leaver, or moved out of every mapped group: nothing may go on under the old role.
      await tx
        .update(users)
        .set({ enabled: false, directoryCheckedAt: now, updatedAt: now })
        .where(eq(users.id, existing.id));
      await endUserSessions(tx, [existing.id]);
      await recordActivity(
        tx,
        DIRECTORY_ACTOR,
        {
          action: "user.disable",
          subjectType: "user",
          subjectId: existing.id,
          before: { enabled: true, role: oldRole },
          after: { enabled: false, role: oldRole, groups: found.groups },
        },
        now,
      );
      await recordEvent(
        tx,
        "user.role_mapped",
        { user_id: existing.id, username: existing.username, old_role: oldRole, new_role: null, groups: found.groups },
        now,
      );
      return { userId: existing.id, refusal: "no group mapped to a role" };
    }
    const update: Partial<typeof users.$inferInsert> = { directoryCheckedAt: now };
    if (existing.roleId !== role.id) {
      update.roleId = role.id;
      update.updatedAt = now;
      await recordActivity(
        tx,
        DIRECTORY_ACTOR,
        {
          action: "user.role_mapped",
          subjectType: "user",
          subjectId: existing.id,
          before: { role: oldRole },
          after: { role: role.name, groups: found.groups },
        },
        now,
      );
      await recordEvent(
        tx,
        "user.role_mapped",
        {
          user_id: existing.id,
          username: existing.username,
          old_role: oldRole,
          new_role: role.name,
          groups: found.groups,
        },
        now,
      );
    }
    await tx.update(users).set(update).where(eq(users.id, existing.id));
    return { userId: existing.id };
  });
}

type Refusal = "no group mapped to a role" | "disabled user" | "not a directory user" | "not a single sign-on user";

export type DirectorySignIn =
  | { outcome: "ok"; userId: number; directory: string }
  | {
      outcome: "refused";
      userId: number | null;
      reason: Refusal | "unknown user" | "wrong password";
      directory: string | null;
    };

/**
 * Signs a user in against the directories in order (search-then-bind): the first whose user_filter finds the
 * name checks the password, and the local record follows the groups read there. Throws DirectoryError when a
 * directory asked cannot be.
 */
export async function signInWithDirectory(
  deps: DirectoryDeps,
  configs: DirectoryConfig[],
  username: string,
  password: string,
  now: Date,
): Promise<DirectorySignIn> {
  for (const config of configs) {
    const checked = await checkDirectoryPassword(config, deps.logger, username, password);
    if (checked.outcome === "unknown user") continue;
    if (checked.outcome !== "ok")
      return { outcome: "refused", userId: null, reason: checked.outcome, directory: config.name };
    const applied = await applyDirectoryGroups(deps.db, username, checked.user, config.group_roles, now);
    return applied.refusal
      ? { outcome: "refused", userId: applied.userId, reason: applied.refusal, directory: config.name }
      : { outcome: "ok", userId: applied.userId!, directory: config.name };
  }
  return { outcome: "refused", userId: null, reason: "unknown user", directory: null };
}

/**
 * Whether a directory user whose groups were read at `checkedAt` may go on now: within the refresh interval,
 * yes; after it, their entry and groups are read again (with the service account) and the record follows them.
 * A directory that cannot be asked, or is switched off, lets nobody through: access must not outlive a removal
 * just because the directory was down when it would have been seen.
 */
export async function directoryStillGrants(
  deps: DirectoryDeps,
  user: { id: number; username: string; checkedAt: Date | null },
  now: Date,
): Promise<boolean> {
  const directories = await directoryConfigs(deps);
  if (!directories) return false;
  if (user.checkedAt && now.getTime() - user.checkedAt.getTime() < directories.refreshMinutes * 60_000) return true;
  let found: { config: DirectoryConfig; user: DirectoryUser } | null;
  try {
    found = await findInDirectories(deps, directories.configs, user.username);
  } catch (err) {
    if (!(err instanceof DirectoryError)) throw err;
    deps.logger.warn("directory user's groups could not be re-read; request refused", {
      username: user.username,
      reason: err.message,
    });
    return false;
  }
  const applied = await applyDirectoryGroups(
    deps.db,
    user.username,
    found?.user ?? { dn: "", email: null, groups: [] },
    found?.config.group_roles ?? {},
    now,
  );
  return !applied.refusal;
}
