import type { ConnectionOptions } from "node:tls";
import { Client, Filter, InvalidCredentialsError } from "ldapts";
import type { Logger } from "../../../kernel/logger.ts";
import type { Settings } from "../../settings/schema.ts";

/** The directory could not be asked (unreachable, untrusted certificate, refused service account, bad filter). */
export class DirectoryError extends Error {}

/** One directory as the client uses it: its settings, its name (MAIN_DIRECTORY or an ldap.directories entry's) and its bind password. */
export type DirectoryConfig = Omit<Settings["ldap"], "directories" | "group_refresh_minutes"> & {
  name: string;
  bindPassword: string | null;
};

/** A user entry as netkeep needs it: where it is, its e-mail, and the cn of every group the group filter finds. */
export type DirectoryUser = { dn: string; email: string | null; groups: string[] };

/** Puts values into a filter template ({username}, {dn}), each escaped per RFC 4515 so input cannot add filter syntax. */
export function fillFilter(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? Filter.escape(values[name]!) : whole,
  );
}

/**
 * The role a user's groups give: the first entry of group_roles whose group the user is in (groups compared
 * without case, as directories compare cn), or null when none is.
 */
export function roleForGroups(groups: string[], groupRoles: Record<string, string>): string | null {
  const held = new Set(groups.map((g) => g.toLowerCase()));
  for (const [group, role] of Object.entries(groupRoles)) if (held.has(group.toLowerCase())) return role;
  return null;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO|ALTNAME|ERR_TLS|ERR_SSL|EPROTO/;

/** One readable sentence for whatever stopped a talk with the directory; never a password. */
function explain(err: unknown, config: DirectoryConfig): DirectoryError {
  if (err instanceof DirectoryError) return err;
  const e = err as { code?: string | number; message?: string; name?: string };
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && TLS_CODES.test(code)) {
    return new DirectoryError(
      `the directory at ${config.url} has a TLS certificate netkeep does not trust (${code}): set ldap.ca_certificate to the CA that signed it, and use the host name the certificate names`,
    );
  }
  if (code && /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT/.test(code)) {
    return new DirectoryError(`the directory at ${config.url} cannot be reached (${code})`);
  }
  if (/timeout/i.test(e.message ?? "") || /Timeout/.test(e.name ?? "")) {
    return new DirectoryError(`the directory at ${config.url} did not answer within ${config.timeout_seconds} s`);
  }
  return new DirectoryError(
    `the directory at ${config.url} answered with an error: ${(e.message ?? String(err)).slice(0, 300)}`,
  );
}

/**
 * A client on a protected connection: ldaps:// is TLS from the start; ldap:// is upgraded with StartTLS, and
 * stays plain only when allow_insecure says so (a warning each time, since passwords then cross in clear).
 */
async function open(config: DirectoryConfig, logger: Logger): Promise<Client> {
  if (!config.url) throw new DirectoryError("the directory has no url (settings ldap.url)");
  const secure = config.url.toLowerCase().startsWith("ldaps:");
  const tls: ConnectionOptions = {
    minVersion: "TLSv1.2",
    ...(config.ca_certificate ? { ca: config.ca_certificate } : {}),
  };
  const timeout = config.timeout_seconds * 1000;
  const client = new Client({
    url: config.url,
    timeout,
    connectTimeout: timeout,
    ...(secure ? { tlsOptions: tls } : {}),
  });
  if (!secure) {
    if (config.allow_insecure)
      logger.warn("directory connection without TLS: passwords cross the network in clear (ldap.allow_insecure)", {
        url: config.url,
      });
    else await client.startTLS(tls);
  }
  return client;
}

async function serviceBind(client: Client, config: DirectoryConfig): Promise<void> {
  if (!config.bind_dn) return;
  try {
    await client.bind(config.bind_dn, config.bindPassword ?? "");
  } catch (err) {
    if (err instanceof InvalidCredentialsError)
      throw new DirectoryError(
        `the directory refused the service account '${config.bind_dn}': check ldap.bind_dn and ldap.bind_password`,
      );
    throw err;
  }
}

const first = (value: unknown): string | null => {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === null ? null : String(v);
};

async function findUser(client: Client, config: DirectoryConfig, username: string): Promise<DirectoryUser | null> {
  const { searchEntries: users } = await client.search(config.user_base!, {
    scope: "sub",
    filter: fillFilter(config.user_filter, { username }),
    attributes: [config.email_attribute],
  });
  if (users.length === 0) return null;
  if (users.length > 1)
    throw new DirectoryError(
      `ldap.user_filter finds ${users.length} entries for '${username}': it must find exactly one`,
    );
  const entry = users[0]!;
  const { searchEntries: groups } = await client.search(config.group_base ?? config.user_base!, {
    scope: "sub",
    filter: fillFilter(config.group_filter, { dn: entry.dn, username }),
    attributes: ["cn"],
  });
  const email = Object.entries(entry).find(([k]) => k.toLowerCase() === config.email_attribute.toLowerCase())?.[1];
  return {
    dn: entry.dn,
    email: first(email),
    groups: groups.map((g) => first(g.cn)).filter((cn): cn is string => cn !== null),
  };
}

async function withClient<T>(
  config: DirectoryConfig,
  logger: Logger,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  let client: Client | undefined;
  try {
    client = await open(config, logger);
    await serviceBind(client, config);
    return await work(client);
  } catch (err) {
    throw explain(err, config);
  } finally {
    await client?.unbind().catch(() => undefined);
  }
}

/** Connects and binds as the service account: what `svc ldap:test` checks. */
export const testDirectory = (config: DirectoryConfig, logger: Logger): Promise<void> =>
  withClient(config, logger, async () => undefined);

/** The user's entry and groups, read with the service account (no password): sign-in refreshes and `svc ldap:user`. */
export const lookUpDirectoryUser = (
  config: DirectoryConfig,
  logger: Logger,
  username: string,
): Promise<DirectoryUser | null> => withClient(config, logger, (client) => findUser(client, config, username));

export type DirectoryCheck = { outcome: "ok"; user: DirectoryUser } | { outcome: "unknown user" | "wrong password" };

/**
 * Search-then-bind: the service account finds the user (the filter decides who may sign in at all, e.g. no
 * disabled accounts) and their groups, then a bind as the user proves the password.
 */
export function checkDirectoryPassword(
  config: DirectoryConfig,
  logger: Logger,
  username: string,
  password: string,
): Promise<DirectoryCheck> {
  // An empty password makes a simple bind "unauthenticated", which servers answer with success.
  if (!password) return Promise.resolve({ outcome: "wrong password" });
  return withClient(config, logger, async (client) => {
    const user = await findUser(client, config, username);
    if (!user) return { outcome: "unknown user" };
    try {
      await client.bind(user.dn, password);
    } catch (err) {
      if (err instanceof InvalidCredentialsError) return { outcome: "wrong password" };
      throw err;
    }
    return { outcome: "ok", user };
  });
}
