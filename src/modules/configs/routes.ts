import { z } from "@hono/zod-openapi";
import {
  apiRoute,
  decimalNumber,
  jsonBody,
  jsonResponse,
  MessageBody,
  pathIds,
  trueOrFalse,
} from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema, MAX_FILTER_VALUES, MAX_PER_PAGE } from "../../platform/http/list.ts";
import { changeListSpec } from "./history/changes.ts";
import { Config, ConfigChange, ConfigChangeWithDiff, ConfigDiff } from "./schemas.ts";
import { MAX_CONTEXT, SEARCH_FILTERS } from "./search/search.ts";
import { configListSpec } from "./service.ts";
import { PURGE_LISTED } from "./storage/retention.ts";

const tag = "Configurations";
const IdParams = pathIds("id");
const DeviceParams = pathIds("device_id");
const textResponse = (
  description: string,
  headers?: Record<string, { description: string; schema: { type: "string" } }>,
) => ({
  description,
  headers,
  content: { "text/plain": { schema: z.string() } },
});

export const listConfigsRoute = apiRoute({
  method: "get",
  path: "/configs",
  operationId: "listConfigs",
  tag,
  ability: "configs.read",
  summary: "List stored configurations",
  description:
    "Every stored version of every command's output, for devices in your scope, newest first by default. " +
    "filter[latest]=true keeps the newest version of each device and command; filter[date_from] / filter[date_to] bound when a version was first seen.",
  request: { query: listQuerySchema(configListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Config), "A page of configuration versions") },
});

export const DIFF_FORMATS = ["json", "unified"] as const;
const configId = (role: string) =>
  z
    .string({ error: `is required: the id of the ${role} config version` })
    .regex(/^[1-9][0-9]{0,14}$/, "must be a positive whole number of at most 15 digits")
    .transform(Number)
    .openapi({ description: `Id of the ${role} version`, example: role === "old" ? "41" : "42" });

export const diffConfigsRoute = apiRoute({
  method: "get",
  path: "/configs/diff",
  operationId: "diffConfigs",
  tag,
  ability: "configs.read",
  summary: "Compare two configuration versions",
  description:
    "Two versions of the same command: of one device (any two versions) or of two devices. Different commands answer 422. " +
    "format=json (default) answers hunks whose lines carry their kind and old/new line numbers, for a side-by-side view; " +
    "format=unified (or Accept: text/plain without format) answers a unified diff as text/plain. " +
    "With exclusions=true, lines matching the compare-exclusion rules for the command are left out of both sides (line numbers still count them).",
  request: {
    query: z.object({
      from: configId("old"),
      to: configId("new"),
      format: z
        .enum(DIFF_FORMATS, { error: `must be one of: ${DIFF_FORMATS.join(", ")}` })
        .optional()
        .openapi({ description: "json (default, unless Accept asks for text/plain) or unified", example: "unified" }),
      context: decimalNumber(0, 100).optional().openapi({
        description:
          "Unchanged lines around each change, 0-100 (default: the settings' compare.context_lines, 3 unless changed)",
        example: 3,
      }),
      ignore_whitespace: trueOrFalse(
        "true: runs of spaces and tabs count as one, and leading and trailing whitespace is ignored (default: the settings' compare.ignore_whitespace)",
      ),
      ignore_case: trueOrFalse("true: letter case is ignored"),
      exclusions: trueOrFalse("true: leave out lines matching the compare-exclusion rules"),
    }),
  },
  responses: {
    200: {
      description: "The differences (none: identical true / an empty text body)",
      content: { "application/json": { schema: z.object({ data: ConfigDiff }) }, "text/plain": { schema: z.string() } },
    },
    404: jsonResponse(MessageBody, "A version does not exist or is outside your scope"),
  },
});

export const exportConfigsRoute = apiRoute({
  method: "get",
  path: "/configs/export",
  operationId: "exportConfigs",
  tag,
  ability: "configs.read",
  summary: "Download the latest configurations as a .tar.gz",
  description:
    "The newest version of every device and command in your scope that the list filters select, one file per device and command " +
    "(<device>/<command>.txt, names made file-safe), as configs-<date>.tar.gz. Streamed, however many there are.",
  request: { query: listQuerySchema(configListSpec).omit({ page: true, per_page: true, perPage: true, fields: true }) },
  responses: {
    200: {
      description: "A gzip-compressed ustar archive",
      content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
});

export const configsByDeviceRoute = apiRoute({
  method: "get",
  path: "/configs/all-by-deviceid/{device_id}",
  operationId: "listDeviceConfigs",
  tag,
  ability: "configs.read",
  summary: "List every stored version of a device's configurations",
  description: "Like GET /configs for one device (the same filters, sorts and fields apply).",
  request: { params: DeviceParams, query: listQuerySchema(configListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Config), "A page of the device's configuration versions") },
});

export const latestByDeviceRoute = apiRoute({
  method: "get",
  path: "/configs/latest-by-deviceid/{device_id}",
  operationId: "listDeviceLatestConfigs",
  tag,
  ability: "configs.read",
  summary: "List the latest version of each of a device's commands",
  description:
    "The newest stored version per command of one device: what the device ran at its last successful backup.",
  request: { params: DeviceParams, query: listQuerySchema(configListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Config), "The newest version per command") },
});

export const getConfigRoute = apiRoute({
  method: "get",
  path: "/configs/{id}",
  operationId: "getConfig",
  tag,
  ability: "configs.read",
  summary: "Show a configuration version's metadata",
  description:
    "The version's device, command, hash, size and when downloads saw it; the text is at /configs/{id}/content.",
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.object({ data: Config }), "The version") },
});

export const configContentRoute = apiRoute({
  method: "get",
  path: "/configs/{id}/content",
  operationId: "getConfigContent",
  tag,
  ability: "configs.read",
  summary: "Get a configuration version's text",
  description: "The stored text of one version, as the collector cleaned it (secrets removed per the template).",
  request: { params: IdParams },
  responses: { 200: textResponse("The text, as stored (text/plain; charset=utf-8)") },
});

export const downloadConfigRoute = apiRoute({
  method: "get",
  path: "/configs/{id}/download",
  operationId: "downloadConfig",
  tag,
  ability: "configs.read",
  summary: "Download a configuration version as a file",
  description:
    "The text as an attachment named <device>_<command>_<version>.txt (e.g. core-rtr-01_show-running-config_3.txt).",
  request: { params: IdParams },
  responses: {
    200: textResponse("The text as a file", {
      "Content-Disposition": {
        description: 'attachment; filename="<device>_<command>_<version>.txt"',
        schema: { type: "string" },
      },
    }),
  },
});

export const deleteConfigRoute = apiRoute({
  method: "delete",
  path: "/configs/{id}",
  operationId: "deleteConfig",
  tag,
  ability: "configs.write",
  summary: "Delete a configuration version",
  description:
    "Deletes the version and the change row that recorded its arrival. Its text is deleted too unless another version has the same text. " +
    "If it was the latest, the previous version (by number) becomes the latest; nothing is renumbered.",
  request: { params: IdParams },
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});

// Config changes (v2): each new version's arrival, what it changed and what triggered the download.
const changesTag = "Configuration changes";

export const listChangesRoute = apiRoute({
  method: "get",
  path: "/config-changes",
  operationId: "listConfigChanges",
  tag: changesTag,
  ability: "configs.read",
  summary: "List configuration changes",
  description:
    "One record per new configuration version, newest first, for devices in your scope; GET /config-changes/{id} adds the diff.",
  request: { query: listQuerySchema(changeListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(ConfigChange), "A page of changes") },
});

export const getChangeRoute = apiRoute({
  method: "get",
  path: "/config-changes/{id}",
  operationId: "getConfigChange",
  tag: changesTag,
  ability: "configs.read",
  summary: "Show a configuration change with its diff",
  description:
    "The change a new version made: a unified diff against the version before it, and what triggered the download.",
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(z.object({ data: ConfigChangeWithDiff }), "The change and its unified diff") },
});

export const changeByConfigRoute = apiRoute({
  method: "get",
  path: "/config-changes/by-config/{config_id}",
  operationId: "getConfigChangeByConfig",
  tag: changesTag,
  ability: "configs.read",
  summary: "Show the change that produced a configuration version",
  description: "The same answer as GET /config-changes/{id}, found by the version it produced.",
  request: { params: pathIds("config_id") },
  responses: { 200: jsonResponse(z.object({ data: ConfigChangeWithDiff }), "The change and its unified diff") },
});

// Configuration search: GET and POST /configs/search (search/search.ts).

/** What a search answers when the request does not say. */
export const SEARCH_DEFAULT_PER_PAGE = 25;
export const SEARCH_DEFAULT_MAX_MATCHES = 100;

const ContextLine = z.object({ line_number: z.number().int(), line: z.string() });
const SearchHit = z
  .object({
    config_id: z.number().int(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string(),
    version: z.number().int(),
    latest: z.boolean().openapi({ description: "Whether this is the newest version of the device's command" }),
    first_seen_at: z.string(),
    last_seen_at: z.string(),
    match_count: z
      .number()
      .int()
      .openapi({ description: "Matching lines in this configuration (matches lists at most max_matches)" }),
    matches: z.array(
      ContextLine.extend({
        terms: z.array(z.number().int()).openapi({ description: "Which terms (by position, from 0) the line matches" }),
        before: z.array(ContextLine),
        after: z.array(ContextLine),
      }),
    ),
  })
  .openapi("ConfigSearchHit");

const SearchResponse = listEnvelopeSchema(SearchHit).extend({
  search: z.object({
    index_used: z
      .boolean()
      .openapi({ description: "false when a term gave the index nothing to look up and configurations were scanned" }),
    configs_checked: z.number().int().openapi({ description: "Configurations whose text was read to confirm matches" }),
  }),
});

const term = z.string().min(1, "must not be empty").max(500, "must be at most 500 characters");

/** The options GET and POST share. */
export const searchOptions = {
  match: z
    .enum(["all", "any"], { error: "must be all or any" })
    .optional()
    .openapi({ description: "all (default): a configuration must match every term; any: one term is enough" }),
  context_before: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown before each match (0-${MAX_CONTEXT}; default: context)` }),
  context_after: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown after each match (0-${MAX_CONTEXT}; default: context)` }),
  context: decimalNumber(0, MAX_CONTEXT)
    .optional()
    .openapi({ description: `Lines shown before and after each match (0-${MAX_CONTEXT}, default 0)` }),
  page: decimalNumber(1, 1_000_000).optional().openapi({ description: "Page of matching configurations, from 1" }),
  per_page: decimalNumber(1, MAX_PER_PAGE)
    .optional()
    .openapi({ description: `Configurations per page (default ${SEARCH_DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE})` }),
  max_matches: decimalNumber(1, 1000)
    .optional()
    .openapi({
      description: `Matching lines listed per configuration (default ${SEARCH_DEFAULT_MAX_MATCHES}); match_count counts them all`,
    }),
};

export const SearchQuery = z.object({
  q: z
    .union([term, z.array(term).max(10, "must be at most 10 terms")], {
      // A union names no reason of its own: say which rule the value broke.
      error: (issue) =>
        issue.input === undefined
          ? "is required: the text to look for"
          : Array.isArray(issue.input)
            ? "must be at most 10 terms"
            : undefined,
    })
    .openapi({ description: "A term to look for; repeat q for several terms (at most 10)", example: "10.255.0.14" }),
  regex: trueOrFalse(
    "true: terms are regular expressions, run in RE2 (written as for JavaScript; no lookaround or backreferences) (default false: plain text)",
  ),
  case_sensitive: trueOrFalse("true: letters must match in case (default false)"),
  latest_only: trueOrFalse(
    "false: search every stored version, not only the latest of each device and command (default true)",
  ),
  perPage: decimalNumber(1, MAX_PER_PAGE).optional().openapi({ description: "Alias of per_page" }),
  ...searchOptions,
  ...Object.fromEntries(
    Object.entries(SEARCH_FILTERS).map(([name, f]) => [
      `filter[${name}]`,
      z
        .string()
        .optional()
        .openapi({ description: `${f.describe}; comma-separated values match any` }),
    ]),
  ),
});

const filterValues = z
  .array(z.union([z.string(), z.number()]).transform(String))
  .min(1, "needs at least one value")
  .max(MAX_FILTER_VALUES, `takes at most ${MAX_FILTER_VALUES} values: ask in parts`);
const SearchBody = z
  .strictObject({
    terms: z
      .array(term)
      .min(1, "needs at least one term")
      .max(10, "must be at most 10 terms")
      .openapi({ example: ["permit tcp", "10.255.0.14"] }),
    regex: z.boolean({ error: "must be true or false" }).optional().openapi({
      description:
        "true: terms are regular expressions, run in RE2 (written as for JavaScript; no lookaround or backreferences)",
    }),
    case_sensitive: z.boolean({ error: "must be true or false" }).optional(),
    latest_only: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "false: search all history (default true)" }),
    filter: z
      .strictObject(
        Object.fromEntries(
          Object.entries(SEARCH_FILTERS).map(([name, f]) => [
            name,
            filterValues.optional().openapi({ description: f.describe }),
          ]),
        ),
      )
      .optional()
      .openapi({
        description: "Filters as on GET, each a list of values that match any",
        example: { device_tags: ["core"], command: ["show running-config"] },
      }),
    ...searchOptions,
  })
  .openapi("ConfigSearchRequest");

const searchDescription =
  "Finds lines in stored configurations of devices in your scope. Terms are plain text or regular expressions, any case unless case_sensitive; " +
  "with match=all a configuration must contain every term (on any lines), with match=any one. Results are configurations (latest versions only unless " +
  "latest_only=false), ordered by device name, command and newest version first, each with its matching lines, their line numbers and context lines. " +
  "An index finds the candidates: a term needs a run of 3 or more characters that every match contains, or the search reads every configuration " +
  "in range, which is refused past 5,000 (422). A regular expression that does not compile is a 422 naming the term.";

export const searchConfigsGetRoute = apiRoute({
  method: "get",
  path: "/configs/search",
  operationId: "searchConfigs",
  tag,
  ability: "configs.read",
  summary: "Search configurations",
  description: searchDescription,
  request: { query: SearchQuery },
  responses: { 200: jsonResponse(SearchResponse, "A page of matching configurations") },
});

export const searchConfigsPostRoute = apiRoute({
  method: "post",
  path: "/configs/search",
  operationId: "searchConfigsPost",
  tag,
  ability: "configs.read",
  summary: "Search configurations (JSON body)",
  description: `The same search as GET /configs/search with the request as JSON, for long or many terms. ${searchDescription}`,
  request: jsonBody(SearchBody),
  responses: { 200: jsonResponse(SearchResponse, "A page of matching configurations") },
});

// Retention: the policy and the purge it drives (storage/retention.ts).

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
      .openapi({ description: `The versions that go (the first ${PURGE_LISTED})` }),
    changes_total: z.number().int().openapi({ description: "Change rows of those versions" }),
    blobs_total: z.number().int().openapi({ description: "Stored texts no remaining version refers to" }),
    blob_bytes: z.number().int().openapi({ description: "Stored (compressed) bytes of those texts" }),
    failed_jobs_total: z.number().int().openapi({ description: "Failed download records older than keep_days" }),
    failed_job_ids: z.array(z.number().int()).openapi({ description: `Their job ids (the first ${PURGE_LISTED})` }),
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

// Stored versions the generic masking layer would still mask (storage/secret-history.ts).

const Finding = z
  .object({
    config_id: z.number().int(),
    device_id: z.number().int(),
    device_name: z.string(),
    command: z.string(),
    version: z.number().int(),
    values: z.number().int().openapi({ description: "How many values the generic layer would mask in this version" }),
    rules: z.array(z.string()).openapi({
      description: "The generic rules that found them (keywords, or shape:<name>); never the values",
      example: ["password", "shape:crypt-hash"],
    }),
  })
  .openapi("SecretScanFinding");

export const secretScanRoute = apiRoute({
  method: "get",
  path: "/system/secret-scan",
  operationId: "scanStoredSecrets",
  tag: "System",
  ability: "system.read",
  summary: "Find stored versions that still hold a secret",
  description:
    "Reads every stored configuration version of the devices in the token's scope and reports those where netkeep's generic " +
    "masking layer still finds a value in clear (history stored before today's rules). `svc configs:remask` masks them (docs/configs.md, Secrets). " +
    "Reads every stored text: it takes seconds on a large history.",
  responses: {
    200: jsonResponse(
      z.object({ data: z.object({ versions_scanned: z.number().int(), findings: z.array(Finding) }) }),
      "The versions found, oldest device first; none when the history is clean",
    ),
  },
});
