import { z } from "@hono/zod-openapi";
import { listEnvelopeSchema, listQuerySchema, type ListSpec } from "../../platform/http/list.ts";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { singleLine } from "../../platform/http/text.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";
import { discoveryCandidates } from "../../db/schema/index.ts";
import { inArray, sql } from "drizzle-orm";
import { CANDIDATE_STATES } from "../../db/schema/index.ts";

/**
 * Discovery's routes (docs/discovery.md): a scan of addresses (POST /devices/discover), the candidates it
 * finds, and the scan presets that discovery_scan tasks run. Every one needs a role that sees every device: a
 * scan sends the shared credential sets to addresses, and makes devices no narrower scope would cover.
 */

const TAG = "Discovery";

const target = singleLine(z.string().trim().min(1, "must not be empty").max(253, "must be at most 253 characters"));
const port = z.number({ error: "must be a port number" }).int("must be a port number").min(1).max(65535);
const ports = z.array(port).min(1, "needs at least one port").max(16, "takes at most 16 ports");

export const DiscoverInput = z
  .strictObject({
    addresses: z
      .array(target)
      .min(1, "needs at least one address, host name, range or subnet")
      .max(256, "takes at most 256 targets")
      .openapi({ example: ["192.0.2.10-192.0.2.40", "198.51.100.0/28", "edge-1.example.net"] }),
    ports: ports.default([22, 23]).openapi({ example: [22, 23, 2222] }),
    adopt: z.boolean({ error: "must be true or false" }).default(false).openapi({
      description: "Make a device of each address identified (named after its host name) and back it up",
    }),
    credential_ids: z.array(z.number().int().min(1)).max(50).optional().openapi({
      description: "The credential sets to try, in order (default: every set marked for discovery)",
    }),
  })
  .openapi("DiscoverInput");

export const discoverRoute = apiRoute({
  method: "post",
  path: "/devices/discover",
  operationId: "discoverDevices",
  tag: TAG,
  ability: "devices.write",
  summary: "Find devices at addresses, ranges and subnets",
  description:
    "Queues a discover job that a collector runs: each address named (host names resolved, ranges and subnets of at most a /20 expanded, " +
    "4096 addresses at most) that is not a device yet is probed on `ports`; each that answers is logged in to with the credential sets " +
    "marked for discovery (SSH before Telnet) and detected. Each becomes a candidate (GET /discovery/candidates) with its port, " +
    "credential set, template, vendor, model, OS version, serial and host name; with `adopt` a device named after its host name, queued " +
    "for a backup. Addresses that already are devices are reported in `existing`, not scanned. Answers 202 with the job; with wait=N (at " +
    "most 60 seconds) 200 with the finished job, whose result lists what was `found`. Needs a role that sees every device (else 403).",
  request: { query: z.object({ wait: WaitSeconds }), ...jsonBody(DiscoverInput) },
  responses: {
    200: jsonResponse(z.object({ data: Job }), "The finished discover job: its result lists what was found"),
    202: jsonResponse(z.object({ data: Job }), "Queued (or still running): poll status_url"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const Candidate = z
  .object({
    id: z.number().int(),
    address: z.string(),
    port: z.number().int(),
    protocol: z.enum(["ssh", "telnet"]),
    credential_id: z.number().int().nullable(),
    template_id: z.number().int().nullable(),
    vendor: z.string().nullable(),
    model: z.string().nullable(),
    os_version: z.string().nullable(),
    serial: z.string().nullable(),
    hostname: z.string().nullable(),
    problem: z.string().nullable().openapi({ description: "Why it cannot be adopted yet (null: it can)" }),
    state: z.enum(CANDIDATE_STATES),
    device_id: z.number().int().nullable(),
    preset_id: z.number().int().nullable(),
    found_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("DiscoveryCandidate");

export const candidateListSpec: ListSpec = {
  fields: Object.keys(Candidate.shape),
  filters: {
    state: {
      describe: "pending, adopted or ignored",
      example: "pending",
      build: (v) => inArray(discoveryCandidates.state, v as (typeof CANDIDATE_STATES)[number][]),
    },
    preset_id: {
      describe: "Found by this scan preset",
      build: (v) => inArray(discoveryCandidates.presetId, v.map(Number)),
    },
  },
  sorts: {
    id: discoveryCandidates.id,
    address: sql`${discoveryCandidates.address}`,
    found_at: discoveryCandidates.foundAt,
  },
  defaultSort: "-found_at",
  idColumn: discoveryCandidates.id,
  search: {
    describe: "Substring of the address, host name, vendor or model",
    build: (term) =>
      sql`(instr(lower(${discoveryCandidates.address} || ' ' || coalesce(${discoveryCandidates.hostname}, '') || ' ' || coalesce(${discoveryCandidates.vendor}, '') || ' ' || coalesce(${discoveryCandidates.model}, '')), lower(${term})) > 0)`,
  },
};

export const listCandidatesRoute = apiRoute({
  method: "get",
  path: "/discovery/candidates",
  operationId: "listDiscoveryCandidates",
  tag: TAG,
  ability: "devices.read",
  summary: "List what discovery found",
  request: { query: listQuerySchema(candidateListSpec) },
  responses: {
    200: jsonResponse(listEnvelopeSchema(Candidate), "Candidates"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const adoptCandidateRoute = apiRoute({
  method: "post",
  path: "/discovery/candidates/{id}/adopt",
  operationId: "adoptDiscoveryCandidate",
  tag: TAG,
  ability: "devices.write",
  summary: "Make a device of a candidate",
  description:
    "Creates the device (named after the host name found, bound to the credential set that logged in and set to discover its " +
    "credentials again should it stop working) and queues its backup. 422 when no set logged in or no template recognised it.",
  request: { params: pathIds("id") },
  responses: {
    200: jsonResponse(z.object({ data: Candidate }), "The candidate, adopted: device_id names the device"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const ignoreCandidateRoute = apiRoute({
  method: "post",
  path: "/discovery/candidates/{id}/ignore",
  operationId: "ignoreDiscoveryCandidate",
  tag: TAG,
  ability: "devices.write",
  summary: "Ignore a candidate",
  description: "A candidate ignored stays ignored when later scans find its address again.",
  request: { params: pathIds("id") },
  responses: {
    200: jsonResponse(z.object({ data: Candidate }), "The candidate, ignored"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const adoptAllRoute = apiRoute({
  method: "post",
  path: "/discovery/candidates/adopt",
  operationId: "adoptDiscoveryCandidates",
  tag: TAG,
  ability: "devices.write",
  summary: "Adopt every pending candidate that can be",
  description: "Adopts each pending candidate with a credential set and a template; those without stay pending.",
  responses: {
    200: jsonResponse(
      z.object({ data: z.array(Candidate), message: z.string() }),
      "The candidates adopted, each with its device_id",
    ),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const ScanPreset = z
  .object({
    id: z.number().int(),
    name: z.string(),
    targets: z.array(z.string()),
    ports: z.array(z.number().int()),
    credential_ids: z.array(z.number().int()),
    adopt: z.boolean(),
    connects_per_second: z.number().int(),
    max_connects: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ScanPreset");

export const ScanPresetInput = z
  .strictObject({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters")).openapi({
      example: "branch offices",
    }),
    targets: z
      .array(target)
      .min(1, "needs at least one range or subnet")
      .max(256, "takes at most 256 targets")
      .openapi({ example: ["192.0.2.0/24"] }),
    ports: ports.default([22, 23]),
    credential_ids: z.array(z.number().int().min(1)).max(50).default([]).openapi({
      description: "Sets to try, in order (empty: every set marked for discovery)",
    }),
    adopt: z.boolean().default(false),
    connects_per_second: z.number().int().min(1).max(1000).default(50),
    max_connects: z.number().int().min(1).max(100_000).default(20_000),
  })
  .openapi("ScanPresetInput");

export const listPresetsRoute = apiRoute({
  method: "get",
  path: "/discovery/presets",
  operationId: "listScanPresets",
  tag: TAG,
  ability: "devices.read",
  summary: "List scan presets",
  responses: {
    200: jsonResponse(z.object({ data: z.array(ScanPreset) }), "Every scan preset"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const createPresetRoute = apiRoute({
  method: "post",
  path: "/discovery/presets",
  operationId: "createScanPreset",
  tag: TAG,
  ability: "devices.write",
  summary: "Create a scan preset",
  description:
    "A named list of ranges and subnets with the ports and credential sets a scan uses; a discovery_scan task with its " +
    "`scan_preset_id` runs it on a schedule. Its targets are checked as POST /devices/discover checks them.",
  request: jsonBody(ScanPresetInput),
  responses: {
    201: jsonResponse(z.object({ data: ScanPreset }), "Created"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
    409: jsonResponse(MessageBody, "Another preset has the name"),
  },
});

export const deletePresetRoute = apiRoute({
  method: "delete",
  path: "/discovery/presets/{id}",
  operationId: "deleteScanPreset",
  tag: TAG,
  ability: "devices.write",
  summary: "Delete a scan preset",
  description: "Refused (409, naming them) while discovery_scan tasks run the preset.",
  request: { params: pathIds("id") },
  responses: {
    200: jsonResponse(MessageBody, "Deleted"),
    409: jsonResponse(MessageBody, "Tasks run the preset"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});

export const runPresetRoute = apiRoute({
  method: "post",
  path: "/discovery/presets/{id}/run",
  operationId: "runScanPreset",
  tag: TAG,
  ability: "devices.write",
  summary: "Run a scan preset now",
  request: { params: pathIds("id"), query: z.object({ wait: WaitSeconds }) },
  responses: {
    200: jsonResponse(z.object({ data: Job }), "The finished discover job"),
    202: jsonResponse(z.object({ data: Job }), "Queued (or still running): poll status_url"),
    403: jsonResponse(MessageBody, "The caller's role does not see every device"),
  },
});
