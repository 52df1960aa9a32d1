import { z } from "@hono/zod-openapi";
import { apiRoute, jsonResponse, MessageBody } from "../../platform/http/route.ts";

/** Under the System group the health work also uses. */
const tag = "System";

export const Backup = z
  .object({
    id: z.string().openapi({
      description: "The backup's file name under storage/backups/, which is also its id",
      example: "netkeep-20260601T010000000Z.db.gz",
    }),
    bytes: z.number().int().openapi({ description: "Size of the compressed file" }),
    sha256: z
      .string()
      .openapi({ description: "SHA-256 of the compressed file, also in <id>.sha256 beside it (sha256sum format)" }),
    created_at: z.string(),
  })
  .openapi("DatabaseBackup");

const BackupParams = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "netkeep-20260601T010000000Z.db.gz" }),
});

const ALL_DEVICES =
  "A backup holds every device, so only a user whose role sees all devices may use these routes (403 otherwise).";

export const listBackupsRoute = apiRoute({
  method: "get",
  path: "/system/backups",
  operationId: "listDatabaseBackups",
  tag,
  ability: "system.read",
  summary: "List database backups",
  description: `The backups in storage/backups/, newest first. ${ALL_DEVICES}`,
  responses: { 200: jsonResponse(z.object({ data: z.array(Backup) }), "Every backup") },
});

export const createBackupRoute = apiRoute({
  method: "post",
  path: "/system/backups",
  operationId: "createDatabaseBackup",
  tag,
  ability: "system.write",
  summary: "Back the database up now",
  description:
    "Writes a consistent copy of the embedded database (VACUUM INTO: one read transaction, so the API and collectors keep writing meanwhile), gzip-compressed, " +
    "with its SHA-256, to storage/backups/; then deletes the oldest backups beyond settings.backups.keep. The answer comes once the copy is whole. " +
    "The app key is never in a backup: keep it separately. For a libSQL server the answer is 409, saying which of the server's own backups to use. " +
    ALL_DEVICES,
  responses: {
    201: jsonResponse(z.object({ data: Backup }), "The new backup"),
    409: jsonResponse(
      z.object({ message: z.string() }),
      "The database is a libSQL server, which netkeep cannot copy consistently: use the server's own backups",
    ),
  },
});

export const downloadBackupRoute = apiRoute({
  method: "get",
  path: "/system/backups/{id}/download",
  operationId: "downloadDatabaseBackup",
  tag,
  ability: "system.read",
  summary: "Download a database backup",
  description: `Streams the compressed file; X-Checksum-SHA256 carries its checksum. Restore it with svc db:restore. ${ALL_DEVICES}`,
  request: { params: BackupParams },
  responses: {
    200: {
      description: "The gzip-compressed SQLite database",
      content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
});

export const deleteBackupRoute = apiRoute({
  method: "delete",
  path: "/system/backups/{id}",
  operationId: "deleteDatabaseBackup",
  tag,
  ability: "system.write",
  summary: "Delete a database backup",
  description: `Removes the file and its checksum. ${ALL_DEVICES}`,
  request: { params: BackupParams },
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});
