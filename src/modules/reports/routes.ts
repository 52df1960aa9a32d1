import { z } from "@hono/zod-openapi";
import { apiRoute, decimalNumber } from "../../platform/http/route.ts";
import { TrendsQuery } from "../compliance/index.ts";
import { formatParam, reportResponse } from "./answer.ts";
import { rangeParams } from "./range.ts";
import { CHANGE_GROUPS, DEVICE_GROUPS } from "./service.ts";

const tag = "Reports";
const ability = "system.read";
const SCOPED = "A user whose role is scoped sees only the devices of the scope.";
const CSV = "Every report answers JSON rows, or the same rows as CSV with Accept: text/csv or format=csv.";

export const deviceStatisticsRoute = apiRoute({
  method: "get",
  path: "/reports/devices",
  operationId: "reportDeviceStatistics",
  tag,
  ability,
  summary: "Device statistics: devices per vendor, model, OS version (as SNMP last read it), category, tag or status",
  description: `One row per value of group_by with how many devices have it ("" for none); most devices first. A device with two tags counts under both. ${SCOPED} ${CSV}`,
  request: {
    query: z.object({
      group_by: z
        .enum(DEVICE_GROUPS, { error: `must be one of: ${DEVICE_GROUPS.join(", ")}` })
        .optional()
        .openapi({ description: "Default vendor", example: "vendor" }),
      format: formatParam,
    }),
  },
  responses: {
    200: reportResponse(
      z.object({ group_by: z.string(), value: z.string(), devices: z.number().int() }).openapi("DeviceStatisticsRow"),
      "Devices per value",
    ),
  },
});

export const backupSuccessRoute = apiRoute({
  method: "get",
  path: "/reports/backup-success",
  operationId: "reportBackupSuccess",
  tag,
  ability,
  summary: "Backup success rate per device over a period",
  description: `Per device: the download attempts that finished in the range, how many backed it up (a new version or unchanged), how many failed, and the share (null without attempts). Cancelled jobs do not count. ${SCOPED} ${CSV}`,
  request: { query: z.object({ ...rangeParams, format: formatParam }) },
  responses: {
    200: reportResponse(
      z
        .object({
          device_id: z.number().int(),
          device_name: z.string(),
          attempts: z.number().int(),
          succeeded: z.number().int(),
          failed: z.number().int(),
          success_percent: z.number().nullable(),
        })
        .openapi("BackupSuccessRow"),
      "One row per device",
    ),
  },
});

export const changeHistoryRoute = apiRoute({
  method: "get",
  path: "/reports/changes",
  operationId: "reportChangeHistory",
  tag,
  ability,
  summary: "Configuration changes per day, per device, vendor or tag",
  description: `New configuration versions per UTC day and value of group_by, days with changes only, oldest first. ${SCOPED} ${CSV}`,
  request: {
    query: z.object({
      ...rangeParams,
      group_by: z
        .enum(CHANGE_GROUPS, { error: `must be one of: ${CHANGE_GROUPS.join(", ")}` })
        .optional()
        .openapi({ description: "Default device", example: "device" }),
      format: formatParam,
    }),
  },
  responses: {
    200: reportResponse(
      z
        .object({ date: z.string(), group_by: z.string(), value: z.string(), changes: z.number().int() })
        .openapi("ChangeHistoryRow"),
      "Changes per day and value",
    ),
  },
});

export const topChangersRoute = apiRoute({
  method: "get",
  path: "/reports/top-changers",
  operationId: "reportTopChangers",
  tag,
  ability,
  summary: "The devices that change most",
  description: `Devices by the number of new configuration versions in the range, most first. ${SCOPED} ${CSV}`,
  request: {
    query: z.object({
      ...rangeParams,
      limit: decimalNumber(1, 500)
        .optional()
        .openapi({ description: "How many devices (default 10, at most 500)", example: 10 }),
      format: formatParam,
    }),
  },
  responses: {
    200: reportResponse(
      z
        .object({
          device_id: z.number().int(),
          device_name: z.string(),
          changes: z.number().int(),
          last_change_at: z.string(),
        })
        .openapi("TopChangerRow"),
      "Devices, most changes first",
    ),
  },
});

export const complianceTrendsReportRoute = apiRoute({
  method: "get",
  path: "/reports/compliance-trends",
  operationId: "reportComplianceTrends",
  tag,
  ability,
  summary: "Compliance trends per day or week",
  description: `The fleet's compliance at the end of each period, as GET /policy-compliance/trends computes it, one row per period (the failing rules are in that route's answer). ${SCOPED} ${CSV}`,
  request: { query: TrendsQuery.extend({ format: formatParam }) },
  responses: {
    200: reportResponse(
      z
        .object({
          period_start: z.string(),
          period_end: z.string(),
          devices: z.number().int(),
          compliant: z.number().int(),
          not_compliant: z.number().int(),
          not_evaluated: z.number().int(),
          compliant_percent: z.number().nullable(),
        })
        .openapi("ComplianceTrendRow"),
      "One row per period",
    ),
  },
});
