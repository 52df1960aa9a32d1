import { z } from "@hono/zod-openapi";
import { DEPLOYMENT_DEVICE_STATUSES, DEPLOYMENT_STATES } from "../../db/schema/index.ts";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";
import { singleLine } from "../../platform/http/text.ts";
import { deploymentDeviceListSpec, deploymentListSpec } from "./deployment-views.ts";
import { Snippet } from "./resource.ts";

const tag = "Snippets";

/** The most devices one concurrency setting lets push at once; more would only queue behind the collectors' own limit. */
export const MAX_CONCURRENCY = 100;
/** A deploy to more devices than this must state how many it expects (confirm_device_count). */
export const CONFIRM_ABOVE = 25;

const DynamicVars = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "variable names are letters, digits and underscores"),
    z
      .union([z.string(), z.number(), z.boolean()])
      .transform(String)
      .pipe(
        z
          .string()
          .max(4000, "must be at most 4000 characters")
          .regex(/^[^\r\n]*$/, "must be one line: a value cannot add lines"),
      ),
  )
  .optional()
  .openapi({
    description:
      "Values of the snippet's `{name}` variables; they win over device fields and custom attributes of the same name",
    example: { ntp_server: "10.0.0.5" },
  });

const dryRun = z.boolean({ error: "must be true or false" }).optional().openapi({
  description: "Render every target's exact lines and answer 200 without connecting to any device",
  example: false,
});

export const SendInput = z
  .object({
    device_id: z
      .number({ error: "must be a device id" })
      .int("must be a whole number")
      .positive("must be a positive id")
      .openapi({ example: 1 }),
    dynamic_vars: DynamicVars,
    dry_run: dryRun,
  })
  .openapi("SnippetSendInput");

const ids = (what: string) =>
  z
    .array(
      z
        .number({ error: `must be a list of ${what} ids` })
        .int("must be a whole number")
        .positive("must be a positive id"),
    )
    .max(10_000, "must have at most 10000 items")
    .optional();

export const DeployInput = z
  .object({
    devices: ids("device").openapi({ example: [1] }),
    categories: ids("category").openapi({ example: [] }),
    tags: ids("tag").openapi({ example: [] }),
    dynamic_vars: DynamicVars,
    dry_run: dryRun,
    confirm_device_count: z
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .optional()
      .openapi({
        description: `Required when the deploy reaches more than ${CONFIRM_ABOVE} devices: the count you expect (422 when it differs)`,
        example: 1,
      }),
    canary: z.number().int("must be a whole number").min(0, "must be at least 0").optional().openapi({
      description: "Push to this many devices first; the rest only when all of them succeeded (0: no canary)",
      example: 0,
    }),
    stop_on_failure: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "After a failed push, push to no further device", example: false }),
    concurrency: z
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(MAX_CONCURRENCY, `must be at most ${MAX_CONCURRENCY}`)
      .optional()
      .openapi({ description: "Pushes of this deployment at once (default 10)", example: 10 }),
  })
  .openapi("SnippetDeployInput");

const RenderedDevice = z.object({
  device_id: z.number().int(),
  device_name: z.string(),
  lines: z.array(z.string()),
  rollback_lines: z.array(z.string()),
});
export const DryRun = z
  .object({ dry_run: z.literal(true), device_count: z.number().int(), devices: z.array(RenderedDevice) })
  .openapi("SnippetDryRun");

export const Deployment = z
  .object({
    id: z.number().int(),
    snippet_id: z.number().int().nullable(),
    snippet_name: z.string(),
    kind: z
      .enum(["send", "deploy", "task"])
      .openapi({ description: "send (one device), deploy, or task (a run of a snippet task)" }),
    task_run_id: z.number().int().nullable().openapi({ description: "For a task's deployment: its run" }),
    state: z.enum(DEPLOYMENT_STATES),
    canary: z.number().int(),
    stop_on_failure: z.boolean(),
    concurrency: z.number().int(),
    stopped_reason: z.string().nullable(),
    device_counts: z
      .object(
        Object.fromEntries(DEPLOYMENT_DEVICE_STATUSES.map((s) => [s, z.number().int()])) as Record<
          (typeof DEPLOYMENT_DEVICE_STATUSES)[number],
          z.ZodNumber
        >,
      )
      .openapi({ description: "Devices (those in your scope) by status" }),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    devices_url: z.string(),
  })
  .openapi("SnippetDeployment");

export const DeploymentDevice = z
  .object({
    id: z.number().int(),
    device_id: z.number().int().nullable(),
    device_name: z.string(),
    position: z.number().int(),
    status: z.enum(DEPLOYMENT_DEVICE_STATUSES),
    lines: z.array(z.string()),
    rollback_lines: z.array(z.string()),
    job_id: z.number().int().nullable(),
    message: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        "failed_line {index, line, answer}, saved, rolled_back, before/after config ids, diff, lines_not_in_config",
    }),
    transcript: z.string().nullable().openapi({ description: "What was sent and what came back, secrets masked" }),
    finished_at: z.string().nullable(),
  })
  .openapi("SnippetDeploymentDevice");

const SentJob = Job.extend({ deployment_id: z.number().int(), deployment_url: z.string() }).openapi("SnippetSendJob");
const Id = pathIds("id");
const guardNote = `A deploy reaching more than ${CONFIRM_ABOVE} devices must state confirm_device_count (422 when it is missing or differs). `;
const scopeNote =
  "Targets are the enabled devices in your scope; a device id outside it answers as one that does not exist.";

export const sendSnippetRoute = apiRoute({
  method: "post",
  path: "/snippets/{id}/send",
  operationId: "sendSnippet",
  tag,
  ability: "snippets.write",
  summary: "Push a snippet to one device now",
  description:
    "Renders the snippet for the device (dynamic_vars, then device fields and custom attributes) and queues the push: 202 with the job, polled at status_url; " +
    "with wait=N (at most 60 seconds) 200 with the finished job when it ends in time. dry_run answers 200 with the exact lines and connects to nothing. " +
    "A missing variable is a 422 naming it and the device. Disabled devices answer 409. " +
    scopeNote,
  request: { params: Id, query: z.object({ wait: WaitSeconds }), ...jsonBody(SendInput) },
  responses: {
    200: jsonResponse(z.object({ data: z.union([SentJob, DryRun]) }), "The finished push job, or the dry run's lines"),
    202: jsonResponse(z.object({ data: SentJob }), "Queued (or still running): poll status_url"),
    409: jsonResponse(MessageBody, "The device is disabled"),
  },
});

export const deploySnippetRoute = apiRoute({
  method: "post",
  path: "/snippets/{id}/deploy",
  operationId: "deploySnippet",
  tag,
  ability: "snippets.write",
  summary: "Deploy a snippet to many devices",
  description:
    "Targets: devices, categories and tags (any device any of them reaches). Answers 202 with the deployment; its devices and their results are at devices_url. " +
    guardNote +
    "canary pushes to that many devices first and to the rest only when all succeeded; stop_on_failure stops after the first failed push; " +
    "concurrency bounds the deployment's pushes at once. dry_run answers 200 with every target's exact lines. " +
    scopeNote,
  request: { params: Id, ...jsonBody(DeployInput) },
  responses: {
    200: jsonResponse(z.object({ data: DryRun }), "The dry run: every target's exact lines"),
    202: jsonResponse(z.object({ data: Deployment }), "The deployment, started"),
  },
});

const visibility =
  "A user whose role is scoped sees the deployments that reached at least one device in their scope, and of those only their devices.";

export const listDeploymentsRoute = apiRoute({
  method: "get",
  path: "/snippet-deployments",
  operationId: "listSnippetDeployments",
  tag,
  ability: "snippets.read",
  summary: "List snippet deployments",
  description: "Newest first. " + visibility,
  request: { query: listQuerySchema(deploymentListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Deployment), "A page of deployments") },
});

export const getDeploymentRoute = apiRoute({
  method: "get",
  path: "/snippet-deployments/{id}",
  operationId: "getSnippetDeployment",
  tag,
  ability: "snippets.read",
  summary: "Show a snippet deployment",
  description: visibility,
  request: { params: Id },
  responses: { 200: jsonResponse(z.object({ data: Deployment }), "The deployment") },
});

export const listDeploymentDevicesRoute = apiRoute({
  method: "get",
  path: "/snippet-deployments/{id}/devices",
  operationId: "listSnippetDeploymentDevices",
  tag,
  ability: "snippets.read",
  summary: "List a deployment's devices with their status, result and transcript",
  description: "In push order (canary devices first). " + visibility,
  request: { params: Id, query: listQuerySchema(deploymentDeviceListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(DeploymentDevice), "A page of the deployment's devices") },
});

export const RemediationInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"))
      .optional()
      .openapi({
        description: 'The snippet\'s name (default: "Remediation: <policy> on <device> (result <id>)")',
        example: "Fix SNMP on core-1",
      }),
  })
  .openapi("RemediationSnippetInput");

export const remediationSnippetRoute = apiRoute({
  method: "post",
  path: "/policy-compliance/{id}/snippet",
  operationId: "createRemediationSnippet",
  tag: "Snippets",
  ability: "snippets.write",
  summary: "Turn a compliance result's remediation into a snippet",
  description:
    "Creates a snippet whose content is the remediation lines of every failed rule of the result, in rule order, written for the device's " +
    "connection template; send it (dry run first) to apply the fix. 422 when no failed rule has a deterministic fix. A result of a device outside your scope answers 404.",
  request: { params: pathIds("id"), ...jsonBody(RemediationInput) },
  responses: { 201: jsonResponse(z.object({ data: Snippet }), "The created snippet; Location names its URL") },
});
