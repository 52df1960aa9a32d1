import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { tasks, type TaskType } from "../../db/schema/index.ts";

type SystemTask = {
  systemKey: string;
  name: string;
  description: string;
  type: TaskType;
  cron: string;
  paused: boolean;
};

/** The tasks netkeep creates on first start. Users may edit and pause them, not delete them. */
export const SYSTEM_TASKS: readonly SystemTask[] = [
  {
    systemKey: "nightly_backup",
    name: "Nightly backup",
    type: "download_all",
    cron: "0 2 * * *",
    paused: false,
    description:
      "Backs up every enabled device at 02:00 UTC. With no devices yet its runs do nothing; pause it to stop nightly backups.",
  },
  {
    systemKey: "retention_purge",
    name: "Retention purge",
    type: "purge_configs",
    cron: "30 3 * * *",
    paused: false,
    description: "Deletes the stored configuration versions the retention rules no longer keep, daily at 03:30 UTC.",
  },
  {
    systemKey: "database_backup",
    name: "Database backup",
    type: "backup_database",
    cron: "0 1 * * *",
    paused: false,
    description:
      "Backs netkeep's own database up to storage/backups/ at 01:00 UTC and keeps the newest settings.backups.keep (see docs/system-data.md#database-backups).",
  },
];

/**
 * Creates the system tasks that do not exist yet. A task that exists is left exactly as it is (the user may
 * have changed its schedule or resumed it), and so is a user's task that already has the same name.
 */
export async function seedSystemTasks(db: DbOrTx, now: Date): Promise<void> {
  for (const t of SYSTEM_TASKS) {
    await db
      .insert(tasks)
      .values({ ...t, nameKey: nameKey(t.name), timezone: "UTC", scheduleFrom: now, createdAt: now, updatedAt: now })
      .onConflictDoNothing();
  }
}
