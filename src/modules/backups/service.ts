import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { Config } from "../../kernel/config.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { Db } from "../../db/client.ts";
import { deleteBackup, pruneBackups, writeBackup, type BackupFile } from "../../db/backup.ts";
import { recordActivity, type Actor } from "../../platform/audit/record.ts";
import { getSettings } from "../../platform/settings/service.ts";

/**
 * One database backup into storage/backups/, then the oldest beyond settings.backups.keep deleted (read now,
 * so a changed setting applies to the next backup). The API and the nightly task both come here.
 */
export async function takeBackup(
  db: Db,
  config: Pick<Config, "databaseUrl" | "storageDir">,
  now: Date,
  actor: Actor,
): Promise<BackupFile & { pruned: string[] }> {
  const backup = await writeBackup({ databaseUrl: config.databaseUrl, storageDir: config.storageDir, now });
  const { settings } = await getSettings(db);
  const pruned = pruneBackups(config.storageDir, settings.backups.keep);
  await recordActivity(
    db,
    actor,
    {
      action: "database_backup.create",
      subjectType: "database_backup",
      subjectId: null,
      after: { id: backup.name, bytes: backup.bytes, sha256: backup.sha256, ...(pruned.length ? { pruned } : {}) },
    },
    now,
  );
  return { ...backup, pruned };
}

/** A database backup holds every device: only a role that sees all of them may make, list or fetch one (403). */
export function refuseScopedBackups(scope: DeviceScope): void {
  if (!scope.all)
    throw new ApiError(403, "A database backup holds every device; it needs a role that sees all devices");
}

/** Deletes one backup file and its checksum, recorded in the activity log; 404 when there is no such backup. */
export async function removeBackup(
  db: Db,
  config: Pick<Config, "storageDir">,
  now: Date,
  actor: Actor,
  id: string,
): Promise<void> {
  if (!deleteBackup(config.storageDir, id)) throw ApiError.notFound(`Backup ${id.slice(0, 60)}`);
  await recordActivity(
    db,
    actor,
    { action: "database_backup.delete", subjectType: "database_backup", subjectId: null, before: { id } },
    now,
  );
}
