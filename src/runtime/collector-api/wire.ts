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

/** A device job as a remote collector gets it: what the session needs, its logins sealed to the collector's key. */
export const WireJob = z.object({
  id: z.number().int(),
  type: z.enum(["download", "detect", "snippet_push"]),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  lease_ms: z.number().int(),
  /** The device's columns without its encrypted secrets, times as epoch ms. */
  device: z.record(z.string(), z.unknown()),
  /** The device's connection template; null for a detection of a device that has none (it probes). */
  template_code: z.string().nullable(),
  commands: z.array(z.string()),
  sealed_login: z.string(),
  /** download, snippet_push: the zone's key for digests of masked values (base64), sealed. */
  sealed_digest_key: z.string().optional(),
  /** detect: the SNMP agent to ask (its community or v3 keys), sealed; absent when the device has no SNMP settings. */
  sealed_snmp: z.string().optional(),
  /** detect: the built-in templates the answers are matched against, as the server holds them. */
  builtins: z.array(z.object({ id: z.number().int(), key: z.string(), code: z.string() })).optional(),
  /** snippet_push: the lines, the rollback lines, and the push's login (the snippet credential set's) sealed. */
  push: z
    .object({ lines: z.array(z.string()), rollback_lines: z.array(z.string()), sealed_login: z.string() })
    .optional(),
});
export type WireJob = z.infer<typeof WireJob>;

/**
 * Per command, the HMAC-SHA256 (under the zone's digest key) of the values masking took out of its output: the
 * server keeps it to say when a version's secrets changed; the values themselves never leave the site.
 */
const SecretsDigests = z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/));

/** A download's outputs as the site stored them: cleaned, filtered and masked with the template's rules. */
const Collected = z.object({
  outputs: z.array(z.tuple([z.string(), z.string()])),
  secrets_digests: SecretsDigests.optional(),
  skipped: z.array(z.object({ command: z.string(), reason: z.string() })).optional(),
  fingerprint: z.string().max(200).optional(),
  duration_ms: z.number().int().min(0),
});
export type Collected = z.infer<typeof Collected>;

const DetectMatch = z.object({
  template_id: z.number().int(),
  template: z.string(),
  vendor: z.string().nullable(),
  model: z.string().nullable(),
  os_version: z.string().nullable(),
  serial: z.string().nullable(),
  matched_by: z.array(z.enum(["version", "netconf_capability", "sys_descr", "sys_object_id", "prompt", "banner"])),
  score: z.number(),
});

/**
 * A finished job: `collected` with its outputs already cleaned, filtered and masked at the site, or how it failed.
 * A detection that ran carries `detection`; a push that reached its session stage carries `push` (its downloads
 * before and after, masked as downloads are, and its transcript masked). `upload_key` is the collector's own: the
 * same key twice stores once.
 */
export const ResultUpload = z.object({
  upload_key: z.string().min(8).max(128),
  job_id: z.number().int(),
  outcome: z.enum(["collected", ...JOB_OUTCOMES.filter((o) => o !== "success" && o !== "unchanged")]),
  message: z.string().max(10_000).optional(),
  outputs: z.array(z.tuple([z.string(), z.string()])).optional(),
  secrets_digests: SecretsDigests.optional(),
  skipped: z.array(z.object({ command: z.string(), reason: z.string() })).optional(),
  fingerprint: z.string().max(200).optional(),
  /** Whether the session got as far as the device (a failure's effect on the device's status). */
  reached: z.boolean().optional(),
  last_lines: z.array(z.string()).optional(),
  transcript: z.string().optional(),
  duration_ms: z.number().int().min(0),
  detection: z
    .object({
      result: z.record(z.string(), z.unknown()),
      ranked: z.array(DetectMatch),
      proposal: DetectMatch.nullable(),
      model: z.string().nullable(),
      os_version: z.string().nullable(),
      serial: z.string().nullable(),
      hostname: z.string().nullable(),
      protocol: z.string(),
    })
    .optional(),
  push: z
    .object({
      before: Collected,
      status: z.enum(["success", "failed", "error"]),
      outcome: z.enum(JOB_OUTCOMES).optional(),
      message: z.string().max(10_000),
      saved: z.boolean(),
      failed_line: z
        .object({
          index: z.number().int(),
          stage: z.enum(["enter", "line", "save"]),
          line: z.string(),
          answer: z.string(),
        })
        .optional(),
      rolled_back: z.boolean().optional(),
      transcript: z.string(),
      after: Collected.optional(),
      after_error: z.string().max(1000).optional(),
    })
    .optional(),
});
export type ResultUpload = z.infer<typeof ResultUpload>;
