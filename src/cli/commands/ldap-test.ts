import { DirectoryError, testDirectory } from "../../platform/auth/directory/ldap.ts";
import { CliError, defineCommand } from "../command.ts";
import { consoleDirectoryConfig, consoleLogger, directoryOption, transportOf } from "./ldap-config.ts";

/** Checks the directory settings before anyone signs in with them: connection, TLS trust and the service bind. */
export const ldapTestCommand = defineCommand({
  summary: "Connect to the directory in the settings and bind as its service account",
  options: { directory: directoryOption },
  async run(flags, ctx) {
    const config = await consoleDirectoryConfig(ctx, flags.directory);
    try {
      await testDirectory(config, consoleLogger(ctx.io.print));
    } catch (err) {
      if (err instanceof DirectoryError) throw new CliError(err.message);
      throw err;
    }
    ctx.io.print(
      `Connected to ${config.url} (encryption: ${transportOf(config)}) and bound as ${config.bind_dn ?? "anonymous"}.`,
    );
  },
});
