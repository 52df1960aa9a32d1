import { z } from "zod";
import { JOB_OUTCOMES } from "../../db/schema/index.ts";

/**
 * What a remote collector and the server say to each other (src/runtime/collector-api/routes.ts,
 * collector/remote/). Plain zod, validated on both ends; docs/zones.md describes the protocol.
 */
export const COLLECTOR_CREDENTIAL_HEADER = "collector-credential";

export const EnrollRequest = z.object({
  enrollment_key: z.string().min(1).max(200),
  name: z.string().trim().min(1).max(128),
  public_key: z.string().max(100),
});

export const HeartbeatRequest = z.object({
  version: z.string().max(64),
  sessions: z.number().int().min(0),
  spool_bytes: z.number().int().min(0),
  spool_dropped: z.number().int().min(0),
});

export const ClaimRequest = z.object({
  /** How long the server may hold the request open when no job is runnable (the long poll). */
  wait_ms: z.number().int().min(0).max(60_000),
  max: z.number().int().min(1).max(100),
});

/** A device job as a remote collector gets it: what the session needs, its login sealed to the collector's key. */
export const WireJob = z.object({
  id: z.number().int(),
  type: z.string(),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  lease_ms: z.number().int(),
  /** The device's columns without its encrypted secrets, times as epoch ms. */
  device: z.record(z.string(), z.unknown()),
  template_code: z.string(),
  commands: z.array(z.string()),
  sealed_login: z.string(),
});
export type WireJob = z.infer<typeof WireJob>;

/**
 * A finished job: `collected` with its outputs already cleaned, filtered and masked at the site, or how it failed.
 * `upload_key` is the collector's own: the same key twice stores once.
 */
export const ResultUpload = z.object({
  upload_key: z.string().min(8).max(128),
  job_id: z.number().int(),
  outcome: z.enum(["collected", ...JOB_OUTCOMES.filter((o) => o !== "success" && o !== "unchanged")]),
  message: z.string().max(10_000).optional(),
  outputs: z.array(z.tuple([z.string(), z.string()])).optional(),
  skipped: z.array(z.object({ command: z.string(), reason: z.string() })).optional(),
  fingerprint: z.string().max(200).optional(),
  /** Whether the session got as far as the device (a failure's effect on the device's status). */
  reached: z.boolean().optional(),
  last_lines: z.array(z.string()).optional(),
  transcript: z.string().optional(),
  duration_ms: z.number().int().min(0),
});
export type ResultUpload = z.infer<typeof ResultUpload>;
