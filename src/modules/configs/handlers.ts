import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eq } from "drizzle-orm";
import { configs } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { changeListSpec, getChange, getChangeByConfig, listChanges } from "./history/changes.ts";
import { compareConfigs, comparisonJson, comparisonUnified } from "./history/compare.ts";
import { compareExclusionsResource } from "./history/exclusions-resource.ts";
import { exportArchive } from "./storage/export.ts";
import * as routes from "./routes.ts";
import {
  configExportSpec,
  configListSpec,
  configText,
  deleteConfig,
  deletedConfigMessage,
  deviceInScope,
  getConfig,
  isLatestVersion,
  listConfigs,
} from "./service.ts";
import { configFileName } from "./storage/text.ts";
import { getSettings } from "../../platform/settings/service.ts";

/** Without format=, a client that accepts text/plain and not JSON gets the unified form. */
function wantsUnified(format: string | undefined, accept: string | undefined): boolean {
  if (format) return format === "unified";
  return /\btext\/(plain|x-diff)\b/.test(accept ?? "") && !/\bapplication\/json\b/.test(accept ?? "");
}

/** One device's versions (or only the latest of each command) as a list page; 404 for a device outside the scope. */
async function deviceConfigs(c: Context<AppEnv>, deviceId: number, latestOnly: boolean) {
  const { db } = c.var.services;
  await deviceInScope(db, c.var.auth.scope, deviceId);
  const q = parseListQuery(c, configListSpec, [
    eq(configs.deviceId, deviceId),
    latestOnly ? isLatestVersion : undefined,
  ]);
  const { total, rows } = await listConfigs(db, c.var.auth.scope, q);
  return listEnvelope(c, q, total, rows);
}

/**
 * Static paths (diff, export, all-by-deviceid ...) come before /configs/{id}, which would otherwise take them
 * as ids; other groups' static /configs/... routes must be registered before this function runs.
 */
export function registerConfigRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(routes.listConfigsRoute, async (c) => {
    const q = parseListQuery(c, configListSpec);
    const { total, rows } = await listConfigs(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(routes.diffConfigsRoute, async (c) => {
    const query = c.req.valid("query");
    // What the request leaves out follows the settings' compare options, read now so a change applies at once.
    const defaults = (await getSettings(c.var.services.db)).settings.compare;
    const comparison = await compareConfigs(c.var.services.db, c.var.auth.scope, {
      from: query.from,
      to: query.to,
      context: query.context ?? defaults.context_lines,
      ignoreWhitespace:
        query.ignore_whitespace === undefined ? defaults.ignore_whitespace : query.ignore_whitespace === "true",
      ignoreCase: query.ignore_case === "true",
      exclusions: query.exclusions === "true",
    });
    if (wantsUnified(query.format, c.req.header("accept"))) return c.text(comparisonUnified(comparison), 200);
    return c.json({ data: comparisonJson(comparison) }, 200);
  });

  app.openapi(routes.exportConfigsRoute, async (c) => {
    const q = parseListQuery(c, configExportSpec, [isLatestVersion]);
    const body = await exportArchive(c.var.services.db, c.var.auth.scope, q);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": "application/gzip",
      "Content-Disposition": `attachment; filename="configs-${date}.tar.gz"`,
    });
  });

  app.openapi(routes.configsByDeviceRoute, async (c) =>
    c.json(await deviceConfigs(c, c.req.valid("param").device_id, false), 200),
  );
  app.openapi(routes.latestByDeviceRoute, async (c) =>
    c.json(await deviceConfigs(c, c.req.valid("param").device_id, true), 200),
  );

  app.openapi(routes.getConfigRoute, async (c) =>
    c.json({ data: (await getConfig(c.var.services.db, c.var.auth.scope, c.req.valid("param").id)).out }, 200),
  );

  app.openapi(routes.configContentRoute, async (c) => {
    const { db } = c.var.services;
    const { row } = await getConfig(db, c.var.auth.scope, c.req.valid("param").id);
    return c.text(await configText(db, row), 200);
  });

  app.openapi(routes.downloadConfigRoute, async (c) => {
    const { db } = c.var.services;
    const { out, row } = await getConfig(db, c.var.auth.scope, c.req.valid("param").id);
    return c.text(await configText(db, row), 200, {
      "Content-Disposition": `attachment; filename="${configFileName(out.device_name, out.command, out.version)}"`,
    });
  });

  app.openapi(routes.deleteConfigRoute, async (c) => {
    const id = c.req.valid("param").id;
    const { db, clock } = c.var.services;
    const { blobDeleted } = await deleteConfig(db, c.var.auth.scope, c.var.auth, id, clock.now());
    return c.json({ message: deletedConfigMessage(id, blobDeleted) }, 200);
  });
}

/** Config changes (v2): each new version's arrival, what it changed and what triggered the download. */
function registerConfigChangeRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(routes.listChangesRoute, async (c) => {
    const q = parseListQuery(c, changeListSpec);
    const { total, rows } = await listChanges(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(routes.changeByConfigRoute, async (c) =>
    c.json({ data: await getChangeByConfig(c.var.services.db, c.var.auth.scope, c.req.valid("param").config_id) }, 200),
  );

  app.openapi(routes.getChangeRoute, async (c) =>
    c.json({ data: await getChange(c.var.services.db, c.var.auth.scope, c.req.valid("param").id) }, 200),
  );
}

/** Everything of this group a version mounts: configurations, compare exclusions and (v2) config changes. */
export function registerConfigGroups(app: OpenAPIHono<AppEnv>, options: { changes: boolean }) {
  registerConfigRoutes(app);
  compareExclusionsResource.register(app);
  if (options.changes) registerConfigChangeRoutes(app);
}
