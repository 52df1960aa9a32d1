import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eq } from "drizzle-orm";
import { configs } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { FieldErrorBag } from "../../platform/http/errors.ts";
import { filterParams, listEnvelope, parseListQuery } from "../../platform/http/list.ts";
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
import { searchConfigs, type SearchRequest, type SearchResult } from "./search/search.ts";
import {
  changeRetentionPolicy,
  getRetentionPolicy,
  purgeConfigs,
  serializePolicy,
  serializePurge,
} from "./storage/retention.ts";
import { scanStoredSecrets } from "./storage/secret-history.ts";

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

type SearchOptions = { [K in keyof typeof routes.searchOptions]?: number | string };

/** The options GET and POST /configs/search share, with their defaults. */
function searchOptionsOf(o: SearchOptions) {
  const context = Number(o.context ?? 0);
  return {
    match: (o.match ?? "all") as "all" | "any",
    contextBefore: Number(o.context_before ?? context),
    contextAfter: Number(o.context_after ?? context),
    page: Number(o.page ?? 1),
    maxMatches: Number(o.max_matches ?? routes.SEARCH_DEFAULT_MAX_MATCHES),
  };
}

function searchAnswer(c: Context<AppEnv>, req: SearchRequest, result: SearchResult) {
  const q = { page: req.page, perPage: req.perPage, where: undefined, orderBy: [], fields: null };
  return {
    ...listEnvelope(c, q, result.total, result.hits),
    search: { index_used: result.indexUsed, configs_checked: result.configsChecked },
  };
}

/** A GET search's query (checked by SearchQuery) and its `filter[...]` parameters as the search request; the web's search page reads it the same way. */
export function searchRequestOfQuery(c: Context, query: z.infer<typeof routes.SearchQuery>): SearchRequest {
  const bag = new FieldErrorBag();
  const filter: Record<string, string[]> = {};
  for (const [name, raw] of filterParams(c, bag))
    filter[name] = raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  bag.throwIfAny();
  return {
    ...searchOptionsOf(query),
    terms: typeof query.q === "string" ? [query.q] : query.q,
    regex: query.regex === "true",
    caseSensitive: query.case_sensitive === "true",
    latestOnly: query.latest_only !== "false",
    filter,
    perPage: Number(query.per_page ?? query.perPage ?? routes.SEARCH_DEFAULT_PER_PAGE),
  };
}

/** Configuration search, GET and POST: registered before /configs/{id}, which would take "search" as an id. */
export function registerConfigSearchRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(routes.searchConfigsGetRoute, async (c) => {
    const req = searchRequestOfQuery(c, c.req.valid("query"));
    const result = await searchConfigs(c.var.services.db, c.var.auth.scope, req, "q");
    return c.json(searchAnswer(c, req, result), 200);
  });

  app.openapi(routes.searchConfigsPostRoute, async (c) => {
    const body = c.req.valid("json");
    const req: SearchRequest = {
      ...searchOptionsOf(body),
      terms: body.terms,
      regex: body.regex ?? false,
      caseSensitive: body.case_sensitive ?? false,
      latestOnly: body.latest_only ?? true,
      filter: Object.fromEntries(Object.entries(body.filter ?? {}).filter(([, v]) => v !== undefined)) as Record<
        string,
        string[]
      >,
      perPage: Number(body.per_page ?? routes.SEARCH_DEFAULT_PER_PAGE),
    };
    const result = await searchConfigs(c.var.services.db, c.var.auth.scope, req, "terms");
    return c.json(searchAnswer(c, req, result), 200);
  });
}

/** The retention policy and the purge: registered before /configs/{id}, which would take "purge" as an id. */
export function registerRetentionRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(routes.getRetentionPolicyRoute, async (c) =>
    c.json({ data: serializePolicy(await getRetentionPolicy(c.var.services.db)) }, 200),
  );

  app.openapi(routes.setRetentionPolicyRoute, async (c) => {
    const { db, clock } = c.var.services;
    const body = c.req.valid("json");
    const policy = await changeRetentionPolicy(
      db,
      c.var.auth,
      { keepDays: body.keep_days ?? null, keepVersions: body.keep_versions ?? null },
      clock.now(),
    );
    return c.json({ data: serializePolicy(policy) }, 200);
  });

  app.openapi(routes.purgeConfigsRoute, async (c) => {
    const { db, clock } = c.var.services;
    const dryRun = c.req.valid("query").dry_run === "true";
    const report = await purgeConfigs(db, clock.now(), { dryRun, actor: c.var.auth, scope: c.var.auth.scope });
    return c.json({ data: serializePurge(report) }, 200);
  });
}

/** The scan for stored versions that still hold a secret in clear (v1, under System). */
export function registerSecretScanRoute(app: OpenAPIHono<AppEnv>): void {
  app.openapi(routes.secretScanRoute, async (c) =>
    c.json({ data: await scanStoredSecrets(c.var.services.db, c.var.auth.scope) }, 200),
  );
}
