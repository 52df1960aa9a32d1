import { z } from "@hono/zod-openapi";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";
import { ComplianceResult, DeviceCompliance, Policy, Trends, TrendsQuery } from "./schemas.ts";
import { resultListSpec } from "./results.ts";
import { EXPORT_FORMATS } from "./export.ts";

const tag = "Policy compliance";
const IdParams = pathIds("id");
const JobAnswer = z.object({ data: Job });

const runResponses = {
  200: jsonResponse(JobAnswer, "The finished job; its result counts the evaluations by status"),
  202: jsonResponse(JobAnswer, "Queued (or still running): poll status_url"),
};

export const copyPolicyRoute = apiRoute({
  method: "post",
  path: "/policies/{id}/copy",
  operationId: "copyPolicy",
  tag,
  ability: "policycompliance.write",
  summary: "Copy a policy",
  description:
    "Makes a user policy with the same definition, description and vendor, e.g. to change a read-only built-in one. The body is optional.",
  request: {
    params: IdParams,
    body: {
      required: false,
      content: {
        "application/json": {
          schema: z
            .object({
              name: z
                .string()
                .trim()
                .min(1, "must not be empty")
                .max(255, "must be at most 255 characters")
                .optional()
                .openapi({
                  description: 'The copy\'s name; left out: "<name> (copy)", numbered when that is taken',
                  example: "IOS baseline (ours)",
                }),
            })
            .openapi("PolicyCopyInput"),
        },
      },
    },
  },
  responses: { 201: jsonResponse(z.object({ data: Policy }), "The copy; Location names its URL") },
});

export const runPolicyRoute = apiRoute({
  method: "post",
  path: "/policies/{id}/run",
  operationId: "runPolicy",
  tag,
  ability: "policycompliance.write",
  summary: "Evaluate a policy now",
  description:
    "Queues a job that evaluates each enabled assignment of the policy on every device it covers, against the latest stored configuration " +
    "(checks never connect to devices), and answers 202 with the job. With wait=N (at most 60 seconds) it waits and answers 200 with the finished job, " +
    "or 202 if it is still running when the time is up. A user whose role is scoped evaluates only the devices in their scope " +
    "(the others keep their results), and sees the job at GET /jobs/{id} as its requester.",
  request: { params: IdParams, query: z.object({ wait: WaitSeconds }) },
  responses: runResponses,
});

export const runAssignmentRoute = apiRoute({
  method: "post",
  path: "/policy-assignments/{id}/run",
  operationId: "runPolicyAssignment",
  tag,
  ability: "policycompliance.write",
  summary: "Evaluate an assignment now",
  description: "As POST /policies/{id}/run, for one assignment (evaluated even when disabled: it was asked for).",
  request: { params: IdParams, query: z.object({ wait: WaitSeconds }) },
  responses: runResponses,
});

export const listResultsRoute = apiRoute({
  method: "get",
  path: "/policy-compliance",
  operationId: "listComplianceResults",
  tag,
  ability: "policycompliance.read",
  summary: "List compliance results",
  description:
    "Every evaluation stored: one per assignment, device and configuration version (and policy revision). filter[latest]=true gives each device's current state per assignment.",
  request: { query: listQuerySchema(resultListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(ComplianceResult), "A page of results") },
});

export const trendsRoute = apiRoute({
  method: "get",
  path: "/policy-compliance/trends",
  operationId: "complianceTrends",
  tag,
  ability: "policycompliance.read",
  summary: "Compliance over time",
  description:
    "Per day or week, the share of compliant devices and the failing rules, computed from the results' history: what the fleet looked like at each period's end.",
  request: { query: TrendsQuery },
  responses: { 200: jsonResponse(z.object({ data: Trends }), "One entry per period, oldest first") },
});

export const getResultRoute = apiRoute({
  method: "get",
  path: "/policy-compliance/{id}",
  operationId: "getComplianceResult",
  tag,
  ability: "policycompliance.read",
  summary: "Show a compliance result",
  description:
    "One device's result against one policy, with every rule's evidence and remediation; a device outside your scope answers 404.",
  request: { params: IdParams },
  responses: {
    200: jsonResponse(z.object({ data: ComplianceResult }), "The result, with every rule's evidence and remediation"),
  },
});

export const deviceComplianceRoute = apiRoute({
  method: "get",
  path: "/devices/{id}/compliance",
  operationId: "getDeviceCompliance",
  tag,
  ability: "policycompliance.read",
  summary: "A device's current compliance",
  description: "Each assignment covering the device (or that evaluated it before) with its newest result.",
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.object({ data: DeviceCompliance }), "The device's state") },
});

export const exportResultsRoute = apiRoute({
  method: "get",
  path: "/policy-compliance/export",
  operationId: "exportComplianceResults",
  tag,
  ability: "policycompliance.read",
  summary: "Export compliance results",
  description:
    "The results the filters select (those of GET /api/v1/policy-compliance), in id order, streamed. CSV: one row per result, the failed rules' descriptions " +
    'joined with " | " in failed_rules; JSON: an array of the list\'s records (fields= trims them).',
  request: {
    query: listQuerySchema(resultListSpec).extend({
      format: z
        .enum(EXPORT_FORMATS, { error: `must be one of: ${EXPORT_FORMATS.join(", ")}` })
        .optional()
        .openapi({ description: "csv (default) or json", example: "csv" }),
    }),
  },
  responses: {
    200: {
      description: "The export",
      content: { "text/csv": { schema: z.string() }, "application/json": { schema: z.array(ComplianceResult) } },
    },
  },
});
