import { z } from "@hono/zod-openapi";
import { HEALTH_STATUSES } from "../../db/schema/index.ts";
import { apiRoute, jsonResponse } from "../../platform/http/route.ts";

const healthTag = "System health";

export const HealthCheck = z
  .object({
    name: z.string().openapi({
      description: "database, collectors, scheduler, queue, disk, search_index, backups, app_key or webhooks",
      example: "queue",
    }),
    status: z.enum(HEALTH_STATUSES),
    message: z.string().openapi({ description: "What was found, and when not ok what to do about it" }),
    value: z.number().nullable().openapi({
      description:
        "The measured value the status comes from, when there is one (null for a role that sees only some devices, on the checks that count every device)",
    }),
    unit: z.string().nullable().openapi({ example: "s" }),
  })
  .openapi("HealthCheck");

export const Health = z
  .object({
    id: z.number().int(),
    status: z.enum(HEALTH_STATUSES).openapi({ description: "The worst of the checks' statuses" }),
    trigger: z.enum(["schedule", "api"]),
    ran_at: z.string(),
    checks: z.array(HealthCheck),
  })
  .openapi("Health");

const healthAnswer = { 200: jsonResponse(z.object({ data: Health }), "The latest stored pass of the health checks") };
const latestDescription =
  "The newest stored pass of the health checks, without running them: they run every 5 minutes and on POST /system/health/run. " +
  "When the newest pass is older than 10 minutes (nothing ran them), they run now and that pass answers. " +
  "A role that sees only some devices gets every check's status, but queue, search_index, backups and webhooks without their figures: those count every device.";

export const systemHealthRoute = apiRoute({
  method: "get",
  path: "/system/health",
  operationId: "getSystemHealth",
  tag: healthTag,
  ability: "system.read",
  summary: "Latest health checks",
  description: latestDescription,
  responses: healthAnswer,
});

/** rConfig's paths for the same answer. */
export const healthLatestRoute = apiRoute({
  method: "get",
  path: "/health-latest",
  operationId: "getHealthLatest",
  tag: healthTag,
  ability: "system.read",
  summary: "Latest health checks (rConfig path)",
  description: `${latestDescription} The same answer as GET /system/health.`,
  responses: healthAnswer,
});

export const dashboardHealthLatestRoute = apiRoute({
  method: "get",
  path: "/dashboard/health-latest",
  operationId: "getDashboardHealthLatest",
  tag: healthTag,
  ability: "system.read",
  summary: "Latest health checks (rConfig path)",
  description: `${latestDescription} The same answer as GET /system/health.`,
  responses: healthAnswer,
});

export const runHealthRoute = apiRoute({
  method: "post",
  path: "/system/health/run",
  operationId: "runSystemHealth",
  tag: healthTag,
  ability: "system.write",
  summary: "Run the health checks now",
  description: "Runs every check, stores the pass (it becomes the latest) and answers with it.",
  responses: { 200: jsonResponse(z.object({ data: Health }), "The pass just run") },
});

const Collector = z.object({
  owner: z
    .string()
    .openapi({ description: "host:pid:suffix, as in the jobs' leases", example: "nms-01:4242:1a2b3c4d" }),
  host: z.string(),
  pid: z.number().int(),
  version: z.string(),
  concurrency: z.number().int().openapi({ description: "Sessions it runs at once (COLLECTOR_CONCURRENCY)" }),
  started_at: z.string(),
  last_heartbeat_at: z.string(),
  fresh: z.boolean().openapi({ description: "Heard from within the last 90 seconds" }),
});

export const SystemInfo = z
  .object({
    version: z.string(),
    uptime_seconds: z.number().int().openapi({ description: "How long this API process has run" }),
    runtime: z.object({ name: z.enum(["node", "deno"]), version: z.string() }),
    database: z.object({
      kind: z.enum(["embedded file", "libsql server"]),
      size_bytes: z.number().int().openapi({ description: "Pages in use times page size, as the database reports it" }),
    }),
    storage_used_bytes: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Bytes under STORAGE_DIR (null where the runtime cannot tell)" }),
    collectors: z.array(Collector),
    queue_depth: z.number().int().openapi({ description: "Jobs queued (runnable now or later)" }),
    counts: z.object({
      devices: z.number().int(),
      versions: z.number().int(),
      users: z.number().int(),
      tokens: z.number().int(),
    }),
  })
  .openapi("SystemInfo");

export const systemInfoRoute = apiRoute({
  method: "get",
  path: "/system/info",
  operationId: "getSystemInfo",
  tag: "System",
  ability: "system.read",
  summary: "System information",
  description:
    "Version, uptime, runtime, database kind and size, storage used, the collectors seen in the last 24 hours with their last heartbeat, queue depth, and counts. Devices and versions count those in the token's scope; users and tokens (active ones) the whole service's.",
  responses: { 200: jsonResponse(z.object({ data: SystemInfo }), "The service as it is now") },
});
