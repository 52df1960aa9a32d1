import { z } from "@hono/zod-openapi";
import { JOB_OUTCOMES, JOB_STATES } from "../../db/schema/index.ts";
import { apiRoute, decimalNumber, jsonResponse, pathIds } from "../../platform/http/route.ts";

const tag = "Configuration actions";

export const Job = z
  .object({
    id: z.number().int(),
    type: z.string(),
    device_id: z.number().int().nullable(),
    state: z.enum(JOB_STATES),
    outcome: z.enum(JOB_OUTCOMES).nullable(),
    message: z.string().nullable(),
    trigger: z.string(),
    priority: z.number().int(),
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    result: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    status_url: z.string(),
  })
  .openapi("Job");

/** `?wait=N`: how long a request that queues a job waits for it to finish before answering 202. */
export const WaitSeconds = decimalNumber(0, 60)
  .optional()
  .openapi({ description: "Seconds to wait for the result (0-60)", example: 30 });

export const downloadNowRoute = apiRoute({
  method: "get",
  path: "/download-now/{device_id}",
  operationId: "downloadNow",
  tag,
  ability: "configs.read",
  summary: "Back up a device now",
  description:
    "Queues a high-priority download of the device's configuration and answers 202 with the job and its status URL. " +
    "With wait=N (at most 60 seconds) it waits for the result and answers 200 with the finished job, or 202 if the job is still queued or running when the time is up. " +
    "A download already queued or running for the device is reused. Disabled devices answer 409.",
  request: {
    params: pathIds("device_id"),
    query: z.object({
      wait: WaitSeconds,
    }),
  },
  responses: {
    200: jsonResponse(z.object({ data: Job }), "The finished job and its outcome"),
    202: jsonResponse(z.object({ data: Job }), "Queued (or still running): poll status_url"),
    409: jsonResponse(z.object({ message: z.string() }), "The device is disabled"),
  },
});

export const getJobRoute = apiRoute({
  method: "get",
  path: "/jobs/{id}",
  operationId: "getJob",
  tag,
  ability: "configs.read",
  summary: "Show a job's state and outcome",
  description:
    "queued, running or finished; a finished job carries its outcome (success, unchanged, auth_failed, unreachable, timeout, host_key_changed, prompt_not_found, output_invalid, error), duration and bytes. " +
    "A user whose role is scoped sees jobs about devices in their scope, and jobs about no device (a compliance run of a policy or an " +
    "assignment) that they started themselves; any other job answers 404.",
  request: {
    params: pathIds("id"),
  },
  responses: { 200: jsonResponse(z.object({ data: Job }), "The job") },
});
