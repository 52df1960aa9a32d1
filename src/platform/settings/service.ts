import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { appSettings, credentials, roles, tasks } from "../../db/schema/index.ts";
import { FieldErrorBag, ApiError } from "../http/errors.ts";
import type { SecretBox } from "../secrets/box.ts";
import { recordActivity, type Actor } from "../audit/record.ts";
import { canonicalTimeZone, cronProblem, cronText } from "../../kernel/cron.ts";
import {
  DIRECTORY_DEFAULTS,
  SETTINGS_DEFAULTS,
  type Settings,
  type SettingsOut,
  type SettingsPatch,
  type StoredDirectory,
} from "./schema.ts";

const ROW_ID = 1;
type Section = Record<string, unknown>;

/** Stored values over the defaults, section by section: a field nobody set follows the default. */
function merged(stored: Record<string, unknown>): Settings {
  const out: Record<string, unknown> = {};
  for (const [key, fallback] of Object.entries(SETTINGS_DEFAULTS)) {
    const value = stored[key];
    out[key] =
      fallback !== null && typeof fallback === "object"
        ? { ...fallback, ...((value as Section | undefined) ?? {}) }
        : value === undefined
          ? fallback
          : value;
  }
  const ldap = out.ldap as Settings["ldap"];
  // A directory field added later reaches stored entries as its default, as a section's fields do.
  ldap.directories = (ldap.directories ?? []).map((d) => ({ ...DIRECTORY_DEFAULTS, ...d }));
  return out as Settings;
}

/**
 * The backup schedule is the database backup system task's cron (src/modules/tasks/system-tasks.ts): settings
 * show and change that one schedule, so it is the same whether set here or through the tasks API.
 */
const BACKUP_TASK = "database_backup";

export type StoredSettings = {
  settings: Settings;
  hasSmtpPassword: boolean;
  hasLdapBindPassword: boolean;
  hasOidcClientSecret: boolean;
  updatedAt: Date | null;
};

/**
 * The settings in force, read on every use (nothing caches them), so a change applies at once in every
 * process without a restart.
 */
export async function getSettings(db: DbOrTx): Promise<StoredSettings> {
  const [row] = await db.select().from(appSettings).where(eq(appSettings.id, ROW_ID));
  const settings = merged(row?.values ?? {});
  const [task] = await db.select({ cron: tasks.cron }).from(tasks).where(eq(tasks.systemKey, BACKUP_TASK));
  if (task) settings.backups.cron = task.cron;
  return {
    settings,
    hasSmtpPassword: Boolean(row?.smtpPasswordEnc),
    hasLdapBindPassword: Boolean(row?.ldapBindPasswordEnc),
    hasOidcClientSecret: Boolean(row?.oidcClientSecretEnc),
    updatedAt: row?.updatedAt ?? null,
  };
}

/**
 * The collector section alone, in one statement: what enqueueing a device job (its attempts) and a collector's
 * settings cache (collector/collector-settings.ts) read.
 */
export async function getCollectorSettings(db: DbOrTx): Promise<Settings["collector"]> {
  const [row] = await db.select({ values: appSettings.values }).from(appSettings).where(eq(appSettings.id, ROW_ID));
  return merged(row?.values ?? {}).collector;
}

/**
 * Attempts a device job gets when it is queued: one, plus the settings' `collector.retries` in force then (a retry
 * follows only a failed connection). Callers pass it to the queue (src/platform/jobs/queue.ts), which reads no settings.
 */
export const deviceJobAttempts = async (db: DbOrTx) => 1 + (await getCollectorSettings(db)).retries;

/** The syslog section alone: what a collector's receiver reads (collector/syslog/). */
export async function getSyslogSettings(db: DbOrTx): Promise<Settings["syslog"]> {
  const [row] = await db.select({ values: appSettings.values }).from(appSettings).where(eq(appSettings.id, ROW_ID));
  return merged(row?.values ?? {}).syslog;
}

/** The SMTP password in clear, for the mail sender only; null when none is set. */
export async function smtpPassword(db: DbOrTx, secrets: SecretBox): Promise<string | null> {
  const [row] = await db
    .select({ sealed: appSettings.smtpPasswordEnc })
    .from(appSettings)
    .where(eq(appSettings.id, ROW_ID));
  return row?.sealed ? secrets.decrypt(row.sealed) : null;
}

/** The directory service account's password in clear, for the directory client only; null when none is set. */
export async function ldapBindPassword(db: DbOrTx, secrets: SecretBox): Promise<string | null> {
  const [row] = await db
    .select({ sealed: appSettings.ldapBindPasswordEnc })
    .from(appSettings)
    .where(eq(appSettings.id, ROW_ID));
  return row?.sealed ? secrets.decrypt(row.sealed) : null;
}

/** The bind passwords of ldap.directories in clear, by entry name, for the directory client only. */
export async function ldapDirectoryPasswords(db: DbOrTx, secrets: SecretBox): Promise<Record<string, string>> {
  const [row] = await db
    .select({ sealed: appSettings.ldapDirectoryPasswordsEnc })
    .from(appSettings)
    .where(eq(appSettings.id, ROW_ID));
  return row?.sealed ? (JSON.parse(await secrets.decrypt(row.sealed)) as Record<string, string>) : {};
}

/** The OpenID Connect client secret in clear, for the sign-in flow only; null when none is set. */
export async function oidcClientSecret(db: DbOrTx, secrets: SecretBox): Promise<string | null> {
  const [row] = await db
    .select({ sealed: appSettings.oidcClientSecretEnc })
    .from(appSettings)
    .where(eq(appSettings.id, ROW_ID));
  return row?.sealed ? secrets.decrypt(row.sealed) : null;
}

export function serializeSettings(s: StoredSettings): SettingsOut & { updated_at: string | null } {
  return {
    ...s.settings,
    smtp: { ...s.settings.smtp, has_password: s.hasSmtpPassword },
    ldap: {
      ...s.settings.ldap,
      has_bind_password: s.hasLdapBindPassword,
    },
    oidc: { ...s.settings.oidc, has_client_secret: s.hasOidcClientSecret },
    updated_at: s.updatedAt?.toISOString() ?? null,
  };
}

/** One level of dotted names ("smtp.host"), so the activity log shows each changed field on its own. */
function flat(s: SettingsOut): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(s)) {
    if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) out[`${key}.${k}`] = v;
    else out[key] = value;
  }
  return out;
}

/**
 * An enabled directory needs where to connect and where users are; checked on the merged result of a PATCH, for
 * the main directory (prefix "ldap") and each further one ("ldap.directories.<i>").
 */
function directoryProblem(
  ldap: typeof DIRECTORY_DEFAULTS,
  prefix: string,
): { field: string; message: string } | undefined {
  if (!ldap.enabled) return undefined;
  if (!ldap.url)
    return {
      field: `${prefix}.url`,
      message: `${prefix}.url is needed to enable the directory (ldaps://host:636 or ldap://host:389)`,
    };
  if (!ldap.user_base)
    return {
      field: `${prefix}.user_base`,
      message: `${prefix}.user_base is needed to enable the directory (where users are searched)`,
    };
  if (!Object.keys(ldap.group_roles).length)
    return {
      field: `${prefix}.group_roles`,
      message: `${prefix}.group_roles is needed to enable the directory: map at least one group to a role, or nobody could sign in`,
    };
  return undefined;
}

/** Enabled single sign-on needs the provider and the client, and a mapping (or nobody could sign in). */
function oidcProblem(oidc: Settings["oidc"]): { field: string; message: string } | undefined {
  if (!oidc.enabled) return undefined;
  if (!oidc.issuer)
    return { field: "issuer", message: "oidc.issuer is needed to enable single sign-on (the provider's issuer URL)" };
  if (!oidc.client_id)
    return {
      field: "client_id",
      message: "oidc.client_id is needed to enable single sign-on (the client registered at the provider)",
    };
  if (!Object.keys(oidc.group_roles).length)
    return {
      field: "group_roles",
      message:
        "oidc.group_roles is needed to enable single sign-on: map at least one group to a role, or nobody could sign in",
    };
  return undefined;
}

/** Checks what the schema cannot: the time zone, the cron expression, that the credential exists. */
async function checkPatch(db: DbOrTx, patch: SettingsPatch): Promise<SettingsPatch> {
  const bag = new FieldErrorBag();
  const checked = structuredClone(patch);
  if (patch.timezone !== undefined) {
    const zone = canonicalTimeZone(patch.timezone);
    if (zone) checked.timezone = zone;
    else bag.add("timezone", `timezone '${patch.timezone}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)`);
  }
  if (patch.backups?.cron !== undefined) {
    const cron = cronText(patch.backups.cron);
    const problem = cronProblem(cron);
    if (problem) bag.add("backups.cron", `backups.cron ${problem}`);
    else checked.backups!.cron = cron;
  }
  if (typeof patch.default_credential_id === "number") {
    const [found] = await db
      .select({ id: credentials.id })
      .from(credentials)
      .where(eq(credentials.id, patch.default_credential_id));
    if (!found)
      bag.add("default_credential_id", `default_credential_id ${patch.default_credential_id} is not a credential's id`);
  }
  const mappings: [string, Record<string, string> | undefined][] = [
    ["ldap", checked.ldap?.group_roles],
    ["oidc", checked.oidc?.group_roles],
    ...(checked.ldap?.directories ?? []).map((d, i): [string, Record<string, string> | undefined] => [
      `ldap.directories.${i}`,
      d.group_roles,
    ]),
  ];
  for (const [prefix, groupRoles] of mappings) {
    if (!groupRoles) continue;
    const known = new Map((await db.select({ name: roles.name }).from(roles)).map((r) => [nameKey(r.name), r.name]));
    for (const [group, role] of Object.entries(groupRoles)) {
      const name = known.get(nameKey(role));
      // The role as the catalogue spells it, written into the checked copy (groupRoles is that copy's own map).
      if (name) groupRoles[group] = name;
      else
        bag.add(
          `${prefix}.group_roles`,
          `${prefix}.group_roles maps group '${group}' to role '${role}', which does not exist; use one of: ${[...known.values()].join(", ")}`,
        );
    }
  }
  if (!bag.empty) throw ApiError.validation(bag.errors);
  return checked;
}

/** Merges a PATCH into the stored settings and records the change, in the caller's transaction. */
export async function updateSettings(
  tx: DbOrTx,
  patch: SettingsPatch,
  secrets: SecretBox,
  actor: Actor,
  now: Date,
): Promise<StoredSettings> {
  const checked = await checkPatch(tx, patch);
  const [row] = await tx.select().from(appSettings).where(eq(appSettings.id, ROW_ID));
  const before = await getSettings(tx);
  const values: Record<string, unknown> = { ...(row?.values ?? {}) };
  const { smtp, ldap, oidc, ...rest } = checked;
  const { password, ...smtpFields } = smtp ?? {};
  const { bind_password: bindPassword, directories, ...ldapFields } = ldap ?? {};
  const directorySecretsSet: string[] = [];
  let storedDirectories: StoredDirectory[] | undefined;
  let sealedDirectoryPasswords = row?.ldapDirectoryPasswordsEnc ?? null;
  if (directories) {
    // An entry sent without bind_password keeps the one stored under its name; entries left out lose theirs.
    const previous = await ldapDirectoryPasswords(tx, secrets);
    const passwords: Record<string, string> = {};
    storedDirectories = [];
    for (const { bind_password: password, ...fields } of directories) {
      const kept = password === undefined ? previous[fields.name] : (password ?? undefined);
      if (kept !== undefined) passwords[fields.name] = kept;
      if (password !== undefined) directorySecretsSet.push(`ldap.directories.${fields.name}.bind_password`);
      storedDirectories.push({ ...DIRECTORY_DEFAULTS, ...fields, has_bind_password: kept !== undefined });
    }
    sealedDirectoryPasswords = Object.keys(passwords).length ? await secrets.encrypt(JSON.stringify(passwords)) : null;
  }
  const { client_secret: clientSecret, ...oidcFields } = oidc ?? {};
  for (const [key, value] of Object.entries({
    ...rest,
    ...(smtp ? { smtp: smtpFields } : {}),
    ...(ldap ? { ldap: { ...ldapFields, ...(storedDirectories ? { directories: storedDirectories } : {}) } } : {}),
    ...(oidc ? { oidc: oidcFields } : {}),
  })) {
    if (value === undefined) continue;
    values[key] =
      value !== null && typeof value === "object"
        ? { ...((values[key] as Section | undefined) ?? {}), ...value }
        : value;
  }
  const backups = values.backups as Section | undefined;
  if (backups && "cron" in backups) {
    const { cron, ...rest } = backups;
    values.backups = rest;
    const [task] = await tx.select({ cron: tasks.cron }).from(tasks).where(eq(tasks.systemKey, BACKUP_TASK));
    // The scheduler counts slots from scheduleFrom: a new schedule starts now, as a task edit does.
    if (task && task.cron !== cron)
      await tx
        .update(tasks)
        .set({ cron: String(cron), scheduleFrom: now, updatedAt: now })
        .where(eq(tasks.systemKey, BACKUP_TASK));
  }
  let sealed = row?.smtpPasswordEnc ?? null;
  if (password !== undefined) sealed = password === null ? null : await secrets.encrypt(password);
  let sealedBind = row?.ldapBindPasswordEnc ?? null;
  if (bindPassword !== undefined) sealedBind = bindPassword === null ? null : await secrets.encrypt(bindPassword);
  let sealedClientSecret = row?.oidcClientSecretEnc ?? null;
  if (clientSecret !== undefined)
    sealedClientSecret = clientSecret === null ? null : await secrets.encrypt(clientSecret);
  const mergedLdap = merged(values).ldap;
  for (const [directory, prefix] of [
    [mergedLdap, "ldap"] as const,
    ...mergedLdap.directories.map((d, i) => [d, `ldap.directories.${i}`] as const),
  ]) {
    const problem = directoryProblem(directory, prefix);
    if (problem) throw ApiError.validation({ [problem.field]: [problem.message] });
  }
  const ssoProblem = oidcProblem(merged(values).oidc);
  if (ssoProblem) throw ApiError.validation({ [`oidc.${ssoProblem.field}`]: [ssoProblem.message] });
  const stored = {
    values,
    smtpPasswordEnc: sealed,
    ldapBindPasswordEnc: sealedBind,
    oidcClientSecretEnc: sealedClientSecret,
    ldapDirectoryPasswordsEnc: sealedDirectoryPasswords,
    updatedAt: now,
  };
  await tx
    .insert(appSettings)
    .values({ id: ROW_ID, ...stored })
    .onConflictDoUpdate({ target: appSettings.id, set: stored });
  const after = await getSettings(tx);
  await recordActivity(
    tx,
    actor,
    {
      action: "settings.update",
      subjectType: "settings",
      subjectId: null,
      before: flat(serializeSettings(before)),
      after: flat(serializeSettings(after)),
      secretsSet: [
        ...(password !== undefined ? ["smtp.password"] : []),
        ...(bindPassword !== undefined ? ["ldap.bind_password"] : []),
        ...directorySecretsSet,
        ...(clientSecret !== undefined ? ["oidc.client_secret"] : []),
      ],
    },
    now,
  );
  return after;
}
