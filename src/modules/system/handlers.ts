import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { healthFor, latestHealth, runHealthChecks, serializeHealth, type HealthRun } from "./checks.ts";
import { systemInfo } from "./info.ts";
import {
  dashboardHealthLatestRoute,
  healthLatestRoute,
  runHealthRoute,
  systemHealthRoute,
  systemInfoRoute,
} from "./routes.ts";

const healthDeps = (c: Context<AppEnv>) => c.var.services;
const answer = (c: Context<AppEnv>, run: HealthRun) =>
  c.json({ data: serializeHealth(healthFor(run, c.var.auth.scope)) }, 200);

/** System information and health; `rconfigPath` is the version's rConfig alias of GET /system/health. */
export function registerSystemRoutes(app: OpenAPIHono<AppEnv>, options: { rconfigPath: "v1" | "v2" }): void {
  app.openapi(systemInfoRoute, async (c) => c.json({ data: await systemInfo(c.var.services, c.var.auth.scope) }, 200));
  app.openapi(systemHealthRoute, async (c) => answer(c, await latestHealth(healthDeps(c))));
  if (options.rconfigPath === "v1")
    app.openapi(healthLatestRoute, async (c) => answer(c, await latestHealth(healthDeps(c))));
  else app.openapi(dashboardHealthLatestRoute, async (c) => answer(c, await latestHealth(healthDeps(c))));
  app.openapi(runHealthRoute, async (c) => answer(c, await runHealthChecks(healthDeps(c), "api")));
}
