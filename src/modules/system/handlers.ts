import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/env.ts";
import { latestHealth, runHealthChecks, serializeHealth } from "./checks.ts";
import { systemInfo } from "./info.ts";
import { dashboardHealthLatestRoute, healthLatestRoute, runHealthRoute, systemHealthRoute, systemInfoRoute } from "./routes.ts";

const healthDeps = (c: Context<AppEnv>) => c.var.services;

/** System information and health; `rconfigPath` is the version's rConfig alias of GET /system/health. */
export function registerSystemRoutes(app: OpenAPIHono<AppEnv>, options: { rconfigPath: "v1" | "v2" }): void {
  app.openapi(systemInfoRoute, async (c) => c.json({ data: await systemInfo(c.var.services, c.var.auth.scope) }, 200));
  app.openapi(systemHealthRoute, async (c) => c.json({ data: serializeHealth(await latestHealth(healthDeps(c))) }, 200));
  if (options.rconfigPath === "v1") app.openapi(healthLatestRoute, async (c) => c.json({ data: serializeHealth(await latestHealth(healthDeps(c))) }, 200));
  else app.openapi(dashboardHealthLatestRoute, async (c) => c.json({ data: serializeHealth(await latestHealth(healthDeps(c))) }, 200));
  app.openapi(runHealthRoute, async (c) => c.json({ data: serializeHealth(await runHealthChecks(healthDeps(c), "api")) }, 200));
}
