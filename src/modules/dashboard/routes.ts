import { z } from "@hono/zod-openapi";
import { JOB_OUTCOMES, TASK_TYPES } from "../../db/schema/index.ts";
import { apiRoute, decimalNumber, jsonResponse } from "../../platform/http/route.ts";
import { RunSummary } from "../tasks/index.ts";

const tag = "Dashboard";
const data = <T extends z.ZodType>(schema: T, description: string) => ({
  200: jsonResponse(z.object({ data: schema }), description),
});
const Limit = z.object({
  limit: decimalNumber(1, 100).optional().openapi({ description: "How many (1-100, default 10)", example: 10 }),
});
const scoped = "Counts only the devices in the token's scope.";

export const DeviceCounts = z
  .object({
    total: z.number().int(),
    up: z.number().int().openapi({ description: "Enabled, backed up, and the last download did not fail" }),
    failing: z.number().int().openapi({ description: "Enabled and backed up before, but the last download failed" }),
    disabled: z.number().int(),
    never_backed_up: z.number().int().openapi({ description: "Enabled and never backed up" }),
  })
  .openapi("DashboardDeviceCounts");

export const ErroredDevice = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    device_ip: z.string(),
    job_id: z.number().int(),
    outcome: z.enum(JOB_OUTCOMES),
    reason: z.string().openapi({ description: "The job's message: why it failed" }),
    failed_at: z.string(),
    last_backup_at: z.string().nullable(),
  })
  .openapi("DashboardErroredDevice");

export const LatestDevice = z
  .object({
    device_id: z.number().int(),
    device_name: z.string(),
    device_ip: z.string(),
    enabled: z.boolean(),
    status: z.string(),
    created_at: z.string(),
    last_backup_at: z.string().nullable(),
  })
  .openapi("DashboardLatestDevice");

export const TaskStatus = z
  .object({
    task_id: z.number().int(),
    task_name: z.string(),
    task_type: z.enum(TASK_TYPES),
    paused: z.boolean(),
    last_run: RunSummary.nullable().openapi({ description: "Its latest run; GET /tasks/{id}/runs has the details" }),
  })
  .openapi("DashboardTaskStatus");

export const ConfigInfo = z
  .object({
    versions_stored: z.number().int(),
    devices_with_versions: z.number().int(),
    changes_24h: z.number().int(),
    changes_7d: z.number().int(),
  })
  .openapi("DashboardConfigInfo");

export const PulseDay = z
  .object({ date: z.string().openapi({ example: "2026-06-01" }), changes: z.number().int() })
  .openapi("DashboardPulseDay");

export const QueueInfo = z
  .object({
    queued: z.number().int(),
    running: z.number().int(),
    by_type: z.record(z.string(), z.object({ queued: z.number().int(), running: z.number().int() })),
    oldest_queued_seconds: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "How long the oldest job ready to run has waited; null when none waits" }),
  })
  .openapi("DashboardQueueInfo");

export const ComplianceSummary = z
  .object({
    devices: z.number().int().openapi({ description: "Devices with a compliance result" }),
    compliant: z.number().int(),
    not_compliant: z.number().int(),
    not_evaluated: z.number().int(),
    compliant_percent: z.number().nullable(),
    failing_rules: z.array(
      z.object({
        policy_id: z.number().int(),
        rule: z.number().int(),
        description: z.string(),
        devices: z.number().int(),
      }),
    ),
  })
  .openapi("DashboardComplianceSummary");

const route = <const P extends string, const O extends string>(
  path: P,
  operationId: O,
  summary: string,
  description: string,
  responses: ReturnType<typeof data>,
) => apiRoute({ method: "get", path, operationId, tag, ability: "system.read", summary, description, responses });

export const countsRoute = route(
  "/dashboard/counts",
  "dashboardCounts",
  "Device counts",
  `Devices up, failing, disabled and never backed up. ${scoped}`,
  data(DeviceCounts, "The counts"),
);
export const erroredDevicesRoute = apiRoute({
  method: "get",
  path: "/dashboard/errored-devices",
  operationId: "dashboardErroredDevices",
  tag,
  ability: "system.read",
  summary: "Failing devices",
  description: `Enabled devices whose last download failed, newest failure first, with the reason. ${scoped}`,
  request: { query: Limit },
  responses: data(z.array(ErroredDevice), "The failing devices"),
});
export const latestDevicesRoute = apiRoute({
  method: "get",
  path: "/dashboard/latest-devices",
  operationId: "dashboardLatestDevices",
  tag,
  ability: "system.read",
  summary: "Devices added last",
  description: `The newest devices. ${scoped}`,
  request: { query: Limit },
  responses: data(z.array(LatestDevice), "The devices"),
});
export const taskStatusRoute = route(
  "/dashboard/task-status",
  "dashboardTaskStatus",
  "Backup task status",
  "Each task with its latest run (any status); a scoped token sees the tasks and runs of its devices.",
  data(z.array(TaskStatus), "The tasks, by name"),
);
export const configInfoRoute = route(
  "/dashboard/config-info",
  "dashboardConfigInfo",
  "Configuration information",
  `Versions stored, and changes in the last 24 hours and 7 days. ${scoped}`,
  data(ConfigInfo, "The figures"),
);
export const changePulseRoute = route(
  "/dashboard/change-pulse",
  "dashboardChangePulse",
  "Changes per day",
  `Configuration changes per UTC day for the last 30 days (today included), oldest first; days without changes are 0. ${scoped}`,
  data(z.array(PulseDay), "30 days"),
);
export const queueInfoRoute = route(
  "/dashboard/queue",
  "dashboardQueue",
  "Queue information",
  "Jobs waiting and running, by type, and the age of the oldest waiting job; a scoped token sees its devices' jobs.",
  data(QueueInfo, "The queue"),
);
export const complianceSummaryRoute = route(
  "/dashboard/compliance",
  "dashboardCompliance",
  "Compliance summary",
  `Devices compliant, not compliant and not evaluated now, and the rules failing on most devices (10 at most). ${scoped}`,
  data(ComplianceSummary, "The summary"),
);
