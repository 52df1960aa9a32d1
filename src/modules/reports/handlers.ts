import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { complianceTrends } from "../compliance/index.ts";
import { reportAnswer } from "./answer.ts";
import { dayRange } from "./range.ts";
import {
  backupSuccessRoute,
  changeHistoryRoute,
  complianceTrendsReportRoute,
  deviceStatisticsRoute,
  topChangersRoute,
} from "./routes.ts";
import { backupSuccess, changeHistory, deviceStatistics, topChangers } from "./service.ts";

export function registerReportRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(deviceStatisticsRoute, async (c) => {
    const q = c.req.valid("query");
    return reportAnswer(
      c,
      "device-statistics",
      q.format,
      await deviceStatistics(c.var.services.db, c.var.auth.scope, q.group_by ?? "vendor"),
    ) as never;
  });
  app.openapi(backupSuccessRoute, async (c) => {
    const q = c.req.valid("query");
    const range = dayRange(q, c.var.services.clock.now());
    return reportAnswer(
      c,
      "backup-success",
      q.format,
      await backupSuccess(c.var.services.db, c.var.auth.scope, range),
    ) as never;
  });
  app.openapi(changeHistoryRoute, async (c) => {
    const q = c.req.valid("query");
    const range = dayRange(q, c.var.services.clock.now());
    return reportAnswer(
      c,
      "changes",
      q.format,
      await changeHistory(c.var.services.db, c.var.auth.scope, range, q.group_by ?? "device"),
    ) as never;
  });
  app.openapi(topChangersRoute, async (c) => {
    const q = c.req.valid("query");
    const range = dayRange(q, c.var.services.clock.now());
    return reportAnswer(
      c,
      "top-changers",
      q.format,
      await topChangers(c.var.services.db, c.var.auth.scope, range, q.limit ?? 10),
    ) as never;
  });
  app.openapi(complianceTrendsReportRoute, async (c) => {
    const { format, ...query } = c.req.valid("query");
    const trends = await complianceTrends(c.var.services.db, c.var.auth.scope, query, c.var.services.clock.now());
    const rows = trends.periods.map(({ failing_rules: _, ...p }) => p);
    return reportAnswer(c, "compliance-trends", format, {
      columns: [
        "period_start",
        "period_end",
        "devices",
        "compliant",
        "not_compliant",
        "not_evaluated",
        "compliant_percent",
      ],
      rows,
    }) as never;
  });
}
