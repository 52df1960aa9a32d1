import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { BackupRefused, backupStream, findBackup, listBackups, type BackupFile } from "../../db/backup.ts";
import { refuseScopedBackups, removeBackup, takeBackup } from "./service.ts";
import { createBackupRoute, deleteBackupRoute, downloadBackupRoute, listBackupsRoute } from "./routes.ts";

const serialize = (b: BackupFile) => ({
  id: b.name,
  bytes: b.bytes,
  sha256: b.sha256,
  created_at: b.createdAt.toISOString(),
});

const refuseScoped = (c: Context<AppEnv>) => refuseScopedBackups(c.var.auth.scope);

export function registerBackupRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listBackupsRoute, async (c) => {
    refuseScoped(c);
    return c.json({ data: listBackups(c.var.services.config.storageDir).map(serialize) }, 200);
  });

  app.openapi(createBackupRoute, async (c) => {
    refuseScoped(c);
    const { db, config, clock } = c.var.services;
    let backup: BackupFile;
    try {
      backup = await takeBackup(db, config, clock.now(), c.var.auth);
    } catch (err) {
      if (err instanceof BackupRefused) throw ApiError.conflict(err.message);
      throw err;
    }
    c.header("Location", new URL(`${c.req.path}/${backup.name}/download`, c.req.url).toString());
    return c.json({ data: serialize(backup) }, 201);
  });

  app.openapi(downloadBackupRoute, async (c) => {
    refuseScoped(c);
    const { id } = c.req.valid("param");
    const backup = findBackup(c.var.services.config.storageDir, id);
    if (!backup) throw ApiError.notFound(`Backup ${id}`);
    return c.body(backupStream(backup), 200, {
      "Content-Type": "application/gzip",
      "Content-Length": String(backup.bytes),
      "Content-Disposition": `attachment; filename="${backup.name}"`,
      "X-Checksum-SHA256": backup.sha256,
    }) as never;
  });

  app.openapi(deleteBackupRoute, async (c) => {
    refuseScoped(c);
    const { id } = c.req.valid("param");
    const { db, config, clock } = c.var.services;
    await removeBackup(db, config, clock.now(), c.var.auth, id);
    return c.json({ message: `Backup ${id} deleted` }, 200);
  });
}
