/**
 * rConfig's paths that netkeep has no route of its own for (rConfig's routes/api_v1.php and api_v2.php):
 * /apitest, /sysinfo, /configinfo and /configs/status/{deviceid}/{status}. Each answers rConfig's envelope.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, count, eq, inArray, notInArray, sql, type SQL } from "drizzle-orm";
import type { ApiVersion } from "../../api/api-version.ts";
import { deviceIdInScope, deviceScopeCondition } from "../../../platform/auth/scope.ts";
import { configs, devices, jobs } from "../../../db/schema/index.ts";
import type { AppEnv } from "../../../platform/http/env.ts";
import { apiRoute, jsonResponse } from "../../../platform/http/route.ts";
import { systemInfo } from "../../../modules/system/index.ts";
import { SuccessFields } from "./envelope.ts";
import { CONFIGS_NOT_FOUND, refuseUnknownDevice } from "./configs.ts";

const tag = "rConfig compatibility";
const envelope = <T extends z.ZodRawShape>(shape: T) => z.object({ ...SuccessFields, ...shape });

const apiTestRoute = apiRoute({
  method: "get",
  path: "/apitest",
  operationId: "rconfigApiTest",
  tag,
  ability: "system.read",
  summary: "Check the token and the API (rConfig's /apitest)",
  description: "Answers rConfig's welcome when the token is valid: integrations call it to test their settings.",
  responses: { 200: jsonResponse(envelope({}), "The token works") },
});

const SysInfo = envelope({
  data: z.record(z.string(), z.unknown()).openapi({ description: "netkeep's GET /system/info answer" }),
  OSVersion: z.string().nullable(),
  localIp: z.string().nullable(),
  PublicIP: z.string().nullable(),
  ServerName: z.string(),
  PHPVersion: z
    .string()
    .openapi({ description: "The runtime and netkeep's version, where rConfig gives PHP's and Laravel's" }),
  RedisVersion: z.string().nullable().openapi({ description: "Always null: netkeep has no Redis" }),
  MySQLVersion: z
    .string()
    .openapi({ description: "The database's version (SQLite/libSQL), where rConfig gives MySQL's" }),
});

const sysInfoRoute = apiRoute({
  method: "get",
  path: "/sysinfo",
  operationId: "rconfigSysInfo",
  tag,
  ability: "system.read",
  summary: "Server information (rConfig's /sysinfo)",
  description:
    "rConfig's server-information keys at the top (those netkeep cannot know, such as the public address, are null), netkeep's system information in data.",
  responses: { 200: jsonResponse(SysInfo, "Server information") },
});

const configInfoRoute = apiRoute({
  method: "get",
  path: "/configinfo",
  operationId: "rconfigConfigInfo",
  tag,
  ability: "configs.read",
  summary: "Device and configuration counts (rConfig's /configinfo)",
  description:
    "Over the devices in your scope: devices, unreachable devices, stored versions, and failed downloads still on record.",
  responses: {
    200: jsonResponse(
      envelope({
        data: z.object({
          deviceCount: z.number().int(),
          deviceDownCount: z.number().int(),
          configTotalCount: z.number().int(),
          configDownCount: z.number().int(),
        }),
      }),
      "The counts",
    ),
  },
});

const STATUSES = ["success", "failed", "unknown", "all"] as const;
const statusRoute = apiRoute({
  method: "get",
  path: "/configs/status/{deviceid}/{status}",
  operationId: "rconfigConfigStatusCount",
  tag,
  ability: "configs.read",
  summary: "Count a device's downloads by status (rConfig's /configs/status)",
  description:
    "deviceid is a device id or all (the devices in your scope). Counts download jobs on record: success (success or unchanged), " +
    "failed (finished otherwise), unknown (queued or running), or all. A device that does not exist or is outside your scope answers rConfig's 422 \"" +
    CONFIGS_NOT_FOUND +
    '". netkeep stores a version only when a download succeeds, so it counts downloads, not stored rows.',
  request: {
    params: z.object({
      deviceid: z
        .string()
        .regex(/^(all|\d{1,15})$/, "must be a device id or all")
        .openapi({ param: { name: "deviceid", in: "path" }, example: "1" }),
      status: z
        .enum(STATUSES, { error: `must be one of: ${STATUSES.join(", ")}` })
        .openapi({ param: { name: "status", in: "path" }, example: "success" }),
    }),
  },
  responses: { 200: jsonResponse(envelope({ data: z.object({ count: z.number().int() }) }), "The count") },
});

const SUCCESS = ["success", "unchanged"] as const;
const byStatus: Record<(typeof STATUSES)[number], SQL | undefined> = {
  success: and(eq(jobs.state, "finished"), inArray(jobs.outcome, [...SUCCESS])),
  failed: and(eq(jobs.state, "finished"), notInArray(jobs.outcome, [...SUCCESS])),
  unknown: notInArray(jobs.state, ["finished"]),
  all: undefined,
};

export function registerRconfigRoutes(app: OpenAPIHono<AppEnv>, version: ApiVersion): void {
  app.openapi(apiTestRoute, (c) =>
    c.json(
      { success: true as const, message: `Welcome to the rConfig REST API version ${version.slice(1)} (netkeep)` },
      200,
    ),
  );

  app.openapi(statusRoute, async (c) => {
    const { deviceid, status } = c.req.valid("param");
    const { db } = c.var.services;
    const scope = c.var.auth.scope;
    if (deviceid !== "all") await refuseUnknownDevice(c, Number(deviceid));
    const [row] = await db
      .select({ n: count() })
      .from(jobs)
      .where(
        and(
          eq(jobs.type, "download"),
          deviceid === "all" ? deviceIdInScope(jobs.deviceId, scope) : eq(jobs.deviceId, Number(deviceid)),
          byStatus[status],
        ),
      );
    return c.json(
      {
        success: true as const,
        message: `Config status count for device ID ${deviceid} with status ${status}`,
        data: { count: row?.n ?? 0 },
      },
      200,
    );
  });

  if (version !== "v1") return;

  app.openapi(sysInfoRoute, async (c) => {
    const info = await systemInfo(c.var.services, c.var.auth.scope);
    const [db] = await c.var.services.db.all<{ v: string }>(sql`select sqlite_version() as v`);
    return c.json(
      {
        success: true as const,
        message: "Success",
        data: info,
        OSVersion: null,
        localIp: null,
        PublicIP: null,
        ServerName: new URL(c.var.services.config.appUrl).hostname,
        PHPVersion: `${info.runtime.name} ${info.runtime.version} / netkeep ${info.version}`,
        RedisVersion: null,
        MySQLVersion: `SQLite ${db?.v ?? "unknown"} (${info.database.kind})`,
      },
      200,
    );
  });

  app.openapi(configInfoRoute, async (c) => {
    const { db } = c.var.services;
    const scope = c.var.auth.scope;
    const one = async (query: Promise<{ n: number }[]>) => (await query)[0]?.n ?? 0;
    const [deviceCount, deviceDownCount, configTotalCount, configDownCount] = await Promise.all([
      one(db.select({ n: count() }).from(devices).where(deviceScopeCondition(scope))),
      one(
        db
          .select({ n: count() })
          .from(devices)
          .where(and(eq(devices.status, "unreachable"), deviceScopeCondition(scope))),
      ),
      one(db.select({ n: count() }).from(configs).where(deviceIdInScope(configs.deviceId, scope))),
      one(
        db
          .select({ n: count() })
          .from(jobs)
          .where(and(eq(jobs.type, "download"), byStatus.failed, deviceIdInScope(jobs.deviceId, scope))),
      ),
    ]);
    return c.json(
      {
        success: true as const,
        message: "Success",
        data: { deviceCount, deviceDownCount, configTotalCount, configDownCount },
      },
      200,
    );
  });
}
