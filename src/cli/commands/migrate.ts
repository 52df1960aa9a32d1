import { defineCommand } from "../command.ts";
import { describeDatabaseUrl } from "../database.ts";
import { plural } from "../../kernel/words.ts";

/** The work happens before any command runs (see openMigratedDatabase); this one reports it. */
export const migrateCommand = defineCommand({
  summary: "Apply pending database migrations and bring seeded reference data (built-in roles, vendors) up to date",
  options: {},
  async run(_flags, { config, migration, io }) {
    const where = describeDatabaseUrl(config.databaseUrl);
    io.print(
      migration.applied
        ? `Applied ${plural(migration.applied, "migration")} to ${where} (${plural(migration.total, "migration")} in total).`
        : `No pending migrations: ${where} is up to date (${plural(migration.total, "migration")} applied).`,
    );
    io.print("Seeded reference data: built-in roles, vendors, default category.");
  },
});
