import { openSecretBox } from "../../runtime/bootstrap.ts";
import { directoryConfigs } from "../../platform/auth/directory/directory-users.ts";
import type { DirectoryConfig } from "../../platform/auth/directory/ldap.ts";
import type { Logger } from "../../kernel/logger.ts";
import { loadAppKey } from "../../runtime/app-key-file.ts";
import { CliError, type CommandContext } from "../command.ts";

/**
 * The settings of the directory named (the main one when no name is given; bind password opened with the app
 * key), or a console error saying how to set them.
 */
export async function consoleDirectoryConfig(
  { config, db }: CommandContext,
  name: string | undefined,
): Promise<DirectoryConfig> {
  const secrets = await openSecretBox((await loadAppKey(config, db)).key);
  const found = await directoryConfigs({ db, secrets, logger: consoleLogger(() => undefined) });
  if (!found)
    throw new CliError(
      'directory sign-in is off: PATCH /api/v1/settings with {"ldap": {"enabled": true, ...}} first (docs/users.md)',
    );
  const wanted = name ?? found.configs[0]!.name;
  const directory = found.configs.find((d) => d.name === wanted);
  if (!directory)
    throw new CliError(
      `no enabled directory is named '${wanted}'; enabled: ${found.configs.map((d) => d.name).join(", ")}`,
    );
  return directory;
}

/** The --directory option both ldap commands take. */
export const directoryOption = {
  type: "string",
  placeholder: "NAME",
  description:
    "which directory: main (the ldap section's own) or an ldap.directories entry's name; default: the first enabled",
} as const;

/** The directory client's warnings (a plain connection) shown on the console; nothing else. */
export const consoleLogger = (print: (line: string) => void): Logger => ({
  debug() {},
  info() {},
  warn: (msg) => print(`Warning: ${msg}`),
  error: (msg) => print(`Error: ${msg}`),
});

/** How the connection is protected, in words. */
export function transportOf(config: DirectoryConfig): string {
  if (config.url?.toLowerCase().startsWith("ldaps:")) return "TLS (ldaps)";
  return config.allow_insecure ? "none: plain LDAP, passwords cross the network in clear" : "StartTLS";
}
