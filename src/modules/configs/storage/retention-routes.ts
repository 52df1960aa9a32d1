import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../platform/http/env.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { apiRoute, jsonBody, jsonResponse, trueOrFalse } from "../../../platform/http/route.ts";
import { recordActivity } from "../../../platform/audit/record.ts";
import {
  getRetentionPolicy,
  purgeConfigs,
  serializePolicy,
  setRetentionPolicy,
  type PurgeReport,
} from "./retention.ts";

const tag = "Configurations";
/** Items a purge answer lists; the totals count them all. */
const LISTED = 1000;

const Policy = z
  .object({
    keep_days: z.number().int().nullable().openapi({
      description: "Versions a download last saw more than this many days ago may go (null: no age limit)",
    }),
    keep_versions: z.number().int().nullable().openapi({
      description: "The newest this many versions of each device and command are kept (null: no count limit)",
    }),
    updated_at: z.string().nullable(),
  })
  .openapi("RetentionPolicy");

const limit = (max: number, what: string) =>
  z
    .number({ error: `must be a whole number of ${what} or null` })
    .int(`must be a whole number of ${what}`)
    .min(1, "must be at least 1")
    .max(max, `must be at most ${max}`)
    .nullable()
    .optional();

const PolicyInput = z
  .strictObject({
    keep_days: limit(36_500, "days").openapi({ example: 365 }),
    keep_versions: limit(100_000, "versions").openapi({ example: 50 }),
  })
  .openapi("RetentionPolicyInput");

const PurgeResult = z
  .object({
    dry_run: z.boolean(),
    policy: z.object({ keep_days: z.number().int().nullable(), keep_versions: z.number().int().nullable() }),
    cutoff: z
      .string()
      .nullable()
      .openapi({ description: "Versions last seen before this time are old enough to go (null: no age limit)" }),
    configs_total: z.number().int(),
    configs: z
      .array(
        z.object({
          id: z.number().int(),
          device_id: z.number().int(),
          device_name: z.string(),
          command: z.string(),
          version: z.number().int(),
          last_seen_at: z.string(),
        }),
      )
      .openapi({ description: `The versions that go (the first ${LISTED})` }),
    changes_total: z.number().int().openapi({ description: "Change rows of those versions" }),
    blobs_total: z.number().int().openapi({ description: "Stored texts no remaining version refers to" }),
    blob_bytes: z.number().int().openapi({ description: "Stored (compressed) bytes of those texts" }),
    failed_jobs_total: z.number().int().openapi({ description: "Failed download records older than keep_days" }),
    failed_job_ids: z.array(z.number().int()).openapi({ description: `Their job ids (the first ${LISTED})` }),
  })
  .openapi("PurgeResult");

export const getRetentionPolicyRoute = apiRoute({
  method: "get",
  path: "/configs/retention-policy",
  operationId: "getRetentionPolicy",
  tag,
  ability: "configs.read",
  summary: "Show the configuration retention policy",
  description: "How many versions, and how many days, of each device's history the scheduled purge keeps.",
  responses: { 200: jsonResponse(z.object({ data: Policy }), "The policy") },
});

export const setRetentionPolicyRoute = apiRoute({
  method: "put",
  path: "/configs/retention-policy",
  operationId: "setRetentionPolicy",
  tag,
  ability: "configs.write",
  summary: "Change the configuration retention policy",
  description:
    "A version is purged when it is older than keep_days (by when a download last saw it) and not among the newest keep_versions of its device and command; " +
    "a rule sent as null or left out does not limit, and with neither set nothing is purged. The latest version of each device and command is always kept. " +
    "The policy applies to every device, so only a user whose role sees all devices may change it (403 otherwise).",
  request: jsonBody(PolicyInput),
  responses: { 200: jsonResponse(z.object({ data: Policy }), "The new policy") },
});

export const purgeConfigsRoute = apiRoute({
  method: "post",
  path: "/configs/purge",
  operationId: "purgeConfigs",
  tag,
  ability: "configs.write",
  summary: "Purge configurations the retention policy no longer keeps",
  description:
    "Deletes, in short transactions that let other requests in between (a purge stopped midway leaves a consistent store; running it again finishes it), the versions of devices in your scope that the policy no longer keeps, their change rows, stored texts no version refers to any more, " +
    "and failed download records older than keep_days. With dry_run=true nothing changes and the answer lists exactly what a real run would delete.",
  request: {
    query: z.object({
      dry_run: trueOrFalse("true: only list what would be deleted"),
    }),
  },
  responses: { 200: jsonResponse(z.object({ data: PurgeResult }), "What was (or would be) deleted") },
});

export function serializePurge(report: PurgeReport) {
  return {
    dry_run: report.dryRun,
    policy: { keep_days: report.policy.keepDays, keep_versions: report.policy.keepVersions },
    cutoff: report.cutoff ? report.cutoff.toISOString() : null,
    configs_total: report.configs.length,
    configs: report.configs.slice(0, LISTED).map((c) => ({
      id: c.id,
      device_id: c.deviceId,
      device_name: c.deviceName,
      command: c.command,
      version: c.version,
      last_seen_at: c.lastSeenAt.toISOString(),
    })),
    changes_total: report.changes,
    blobs_total: report.blobs,
    blob_bytes: report.blobBytes,
    failed_jobs_total: report.failedJobIds.length,
    failed_job_ids: report.failedJobIds.slice(0, LISTED),
  };
}

export function registerRetentionRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getRetentionPolicyRoute, async (c) =>
    c.json({ data: serializePolicy(await getRetentionPolicy(c.var.services.db)) }, 200),
  );

  app.openapi(setRetentionPolicyRoute, async (c) => {
    const { db, clock } = c.var.services;
    if (!c.var.auth.scope.all) {
      throw new ApiError(
        403,
        "The retention policy applies to every device; changing it needs a role that sees all devices",
      );
    }
    const body = c.req.valid("json");
    const now = clock.now();
    const policy = await db.transaction(async (tx) => {
      const before = serializePolicy(await getRetentionPolicy(tx));
      const after = await setRetentionPolicy(
        tx,
        { keepDays: body.keep_days ?? null, keepVersions: body.keep_versions ?? null },
        now,
      );
      await recordActivity(
        tx,
        c.var.auth,
        {
          action: "retention_policy.update",
          subjectType: "retention_policy",
          subjectId: 1,
          before,
          after: serializePolicy(after),
        },
        now,
      );
      return after;
    });
    return c.json({ data: serializePolicy(policy) }, 200);
  });

  app.openapi(purgeConfigsRoute, async (c) => {
    const { db, clock } = c.var.services;
    const dryRun = c.req.valid("query").dry_run === "true";
    const report = await purgeConfigs(db, clock.now(), { dryRun, actor: c.var.auth, scope: c.var.auth.scope });
    return c.json({ data: serializePurge(report) }, 200);
  });
}
