import { DirectoryError, lookUpDirectoryUser, roleForGroups } from "../../platform/auth/directory/ldap.ts";
import { CliError, defineCommand } from "../command.ts";
import { consoleDirectoryConfig, consoleLogger, directoryOption } from "./ldap-config.ts";

/** What a sign-in would make of a directory user, read with the service account; nothing is changed. */
export const ldapUserCommand = defineCommand({
  summary: "Show a directory user's entry, groups and the netkeep role they map to (changes nothing)",
  options: {
    username: {
      type: "string",
      placeholder: "USERNAME",
      required: true,
      positional: true,
      description: "the name the user signs in with",
    },
    directory: directoryOption,
  },
  async run(flags, ctx) {
    const config = await consoleDirectoryConfig(ctx, flags.directory);
    let found;
    try {
      found = await lookUpDirectoryUser(config, consoleLogger(ctx.io.print), flags.username);
    } catch (err) {
      if (err instanceof DirectoryError) throw new CliError(err.message);
      throw err;
    }
    if (!found)
      throw new CliError(
        `ldap.user_filter finds no entry for '${flags.username}' under ${config.user_base}: they cannot sign in`,
      );
    const role = roleForGroups(found.groups, config.group_roles);
    ctx.io.print(`DN:     ${found.dn}`);
    ctx.io.print(`E-mail: ${found.email ?? "(none)"}`);
    ctx.io.print(`Groups: ${found.groups.length ? found.groups.join(", ") : "(none)"}`);
    ctx.io.print(
      role ? `Role:   ${role}` : "Role:   none: no group of theirs is in ldap.group_roles, so they cannot sign in",
    );
  },
});
