import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import type { Links } from "../tasks/index.ts";
import {
  changePulseRoute,
  complianceSummaryRoute,
  configInfoRoute,
  countsRoute,
  erroredDevicesRoute,
  latestDevicesRoute,
  queueInfoRoute,
  taskStatusRoute,
} from "./routes.ts";
import {
  changePulse,
  complianceSummary,
  configInfo,
  deviceCounts,
  erroredDevices,
  latestDevices,
  queueInfo,
  taskStatus,
} from "./service.ts";

const linksOf = (c: Context<AppEnv>): Links => ({
  base: new URL(c.req.url).origin,
  version: c.req.path.split("/")[2]!,
});

/** The dashboard's figures: each a small read, in the caller's scope. */
export function registerDashboardRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(countsRoute, async (c) => c.json({ data: await deviceCounts(c.var.services.db, c.var.auth.scope) }, 200));
  app.openapi(erroredDevicesRoute, async (c) =>
    c.json({ data: await erroredDevices(c.var.services.db, c.var.auth.scope, c.req.valid("query").limit ?? 10) }, 200),
  );
  app.openapi(latestDevicesRoute, async (c) =>
    c.json({ data: await latestDevices(c.var.services.db, c.var.auth.scope, c.req.valid("query").limit ?? 10) }, 200),
  );
  app.openapi(taskStatusRoute, async (c) =>
    c.json({ data: await taskStatus(c.var.services.db, c.var.auth.scope, linksOf(c)) }, 200),
  );
  app.openapi(configInfoRoute, async (c) =>
    c.json({ data: await configInfo(c.var.services.db, c.var.auth.scope, c.var.services.clock.now()) }, 200),
  );
  app.openapi(changePulseRoute, async (c) =>
    c.json({ data: await changePulse(c.var.services.db, c.var.auth.scope, c.var.services.clock.now()) }, 200),
  );
  app.openapi(queueInfoRoute, async (c) =>
    c.json({ data: await queueInfo(c.var.services.db, c.var.auth.scope, c.var.services.clock.now()) }, 200),
  );
  app.openapi(complianceSummaryRoute, async (c) =>
    c.json({ data: await complianceSummary(c.var.services.db, c.var.auth.scope, c.var.services.clock.now()) }, 200),
  );
}
