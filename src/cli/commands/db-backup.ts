import { BackupRefused, writeBackup } from "../../db/backup.ts";
import { CliError, defineCommand } from "../command.ts";

export const dbBackupCommand = defineCommand({
  summary: "Write a consistent, compressed, checksummed copy of the database while the service keeps running",
  options: {
    out: {
      type: "string",
      placeholder: "FILE",
      description:
        "where to write the backup (default: storage/backups/netkeep-<time>.db.gz); its checksum goes to FILE.sha256",
    },
  },
  database: false,
  async run(flags, { config, clock, io }) {
    try {
      const backup = await writeBackup({
        databaseUrl: config.databaseUrl,
        storageDir: config.storageDir,
        now: clock.now(),
        out: flags.out,
      });
      io.print(
        `Wrote ${backup.path} (${backup.bytes} bytes, SHA-256 ${backup.sha256}) and its checksum ${backup.path}.sha256.`,
      );
      io.print(
        "The app key is not in it: keep APP_KEY or storage/app.key safe separately, or the stored credentials cannot be read after a restore.",
      );
    } catch (err) {
      if (err instanceof BackupRefused) throw new CliError(err.message);
      throw err;
    }
  },
});
