import { z } from "@hono/zod-openapi";
import { apiRoute, decimalNumber, jsonResponse, MessageBody, pathIds, trueOrFalse } from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { changeListSpec } from "./history/changes.ts";
import { Config, ConfigChange, ConfigChangeWithDiff, ConfigDiff } from "./schemas.ts";
import { configListSpec } from "./service.ts";

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
