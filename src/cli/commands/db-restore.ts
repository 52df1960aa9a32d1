import { BackupRefused, restoreBackup } from "../../db/backup.ts";
import { CliError, defineCommand } from "../command.ts";

export const dbRestoreCommand = defineCommand({
  summary: "Replace the database with a backup, after checking its checksum and integrity; the service must be stopped",
  options: {
    file: {
      type: "string",
      placeholder: "FILE",
      required: true,
      positional: true,
      description: "the backup (.db.gz) to restore; FILE.sha256 must sit beside it",
    },
  },
  database: false,
  async run(flags, { config, clock, io }) {
    try {
      const restored = await restoreBackup({ file: flags.file, databaseUrl: config.databaseUrl, now: clock.now() });
      io.print(`Restored ${flags.file} to ${restored.target}.`);
      if (restored.replaced)
        io.print(
          `The database it replaced is kept as ${restored.replaced}; delete it once the restored one is checked.`,
        );
      io.print(
        "Start the service with the app key that was in use when the backup was taken (APP_KEY or storage/app.key); newer migrations apply at start.",
      );
    } catch (err) {
      if (err instanceof BackupRefused) throw new CliError(err.message);
      throw err;
    }
  },
});
