import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, desc, eq, notInArray } from "drizzle-orm";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import { devices, JOB_OUTCOMES, jobs } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { serializeJob } from "../jobs/index.ts";

/**
 * GET /devices/{id}/last-failure: the device's latest failed download and its session transcript (kept in that
 * job's result by the collector, secrets masked: collector/transcript.ts).
 */

const LastFailure = z
  .object({
    job_id: z.number().int(),
    outcome: z.enum(JOB_OUTCOMES),
    message: z.string().nullable().openapi({ description: "Why it failed" }),
    finished_at: z.string().nullable(),
    last_lines: z.array(z.string()).openapi({ description: "The last lines the device printed before the failure" }),
    transcript: z.string().nullable().openapi({
      description:
        "The session as it went: each line the device printed and each line sent (`[sent] ...`), secrets masked, at most its last 32 KB; null for a failure before any session (a missing template)",
    }),
    status_url: z.string(),
  })
  .openapi("DeviceLastFailure");

export const lastFailureRoute = apiRoute({
  method: "get",
  path: "/devices/{id}/last-failure",
  operationId: "getDeviceLastFailure",
  tag: "Devices",
  ability: "configs.read",
  summary: "Show the transcript of a device's last failed download",
  description:
    "The device's most recent download that failed (any outcome but success, unchanged and cancelled), with the masked transcript " +
    "of its session: what to read first when a device's backups fail (svc device:debug <device> shows the same live). Answers 404 " +
    "when the device has no failed download, or is outside the caller's scope.",
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(z.object({ data: LastFailure }), "The last failed download and its transcript") },
});

export function registerLastFailureRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(lastFailureRoute, async (c) => {
    const id = c.req.valid("param").id;
    const { db } = c.var.services;
    const [device] = await db
      .select({ id: devices.id })
      .from(devices)
      .where(and(eq(devices.id, id), deviceScopeCondition(c.var.auth.scope)));
    if (!device) throw ApiError.notFound(`Device ${id}`);
    const [job] = await db
      .select()
      .from(jobs)
      .where(
        and(
          eq(jobs.deviceId, id),
          eq(jobs.type, "download"),
          eq(jobs.state, "finished"),
          notInArray(jobs.outcome, ["success", "unchanged", "cancelled"]),
        ),
      )
      .orderBy(desc(jobs.id))
      .limit(1);
    if (!job) throw ApiError.notFound(`A failed download of device ${id}`);
    const result = job.result ?? {};
    return c.json(
      {
        data: {
          job_id: job.id,
          outcome: job.outcome!,
          message: job.message,
          finished_at: job.finishedAt?.toISOString() ?? null,
          last_lines: Array.isArray(result.last_lines) ? (result.last_lines as string[]) : [],
          transcript: typeof result.transcript === "string" ? result.transcript : null,
          status_url: serializeJob(c, job).status_url,
        },
      },
      200,
    );
  });
}
