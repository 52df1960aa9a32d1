import { z } from "@hono/zod-openapi";
import { JOB_OUTCOMES } from "../../db/schema/index.ts";
import { Job, WaitSeconds } from "../jobs/index.ts";
import {
  apiRoute,
  ErrorBody,
  jsonBody,
  jsonResponse,
  MessageBody,
  pathIds,
  trueOrFalse,
} from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { deviceListSpec } from "./service.ts";
import { TAG_SEPARATOR } from "./csv.ts";
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, MULTIPART_OVERHEAD } from "./csv-import.ts";
import { EXPORT_FORMATS } from "./export.ts";
import { BulkCreate, BulkIds, BulkUpdate, Device, DeviceInput, DevicePatch, DeviceSummary } from "./schemas.ts";

const tag = "Devices";
const DeviceParams = pathIds("id");
const one = z.object({ data: Device });
const many = z.object({ data: z.array(Device) });

export const listDevicesRoute = apiRoute({
  method: "get",
  path: "/devices",
  operationId: "listDevices",
  tag,
  ability: "devices.read",
  summary: "List devices",
  description: "Devices visible to the token's owner, paginated, with filters, sorting, search and field selection.",
  request: { query: listQuerySchema(deviceListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(Device), "A page of devices") },
});

export const searchDevicesRoute = apiRoute({
  method: "get",
  path: "/devices/search",
  operationId: "searchDevices",
  tag,
  ability: "devices.read",
  summary: "Search devices by name, address, model, vendor or tag",
  request: {
    query: listQuerySchema(deviceListSpec).extend({
      q: z
        .string()
        .trim()
        .min(1, "is required: the text to look for")
        .max(200)
        .openapi({ description: "Substring to look for (any case)", example: "core" }),
    }),
  },
  responses: { 200: jsonResponse(listEnvelopeSchema(Device), "A page of matching devices") },
});

export const deviceSummaryRoute = apiRoute({
  method: "get",
  path: "/devices/summary",
  operationId: "deviceSummary",
  tag,
  ability: "devices.read",
  summary: "Count devices by state",
  description:
    "Totals over the devices visible to the token's owner: up, unreachable, unknown, disabled, never backed up, and the latest backup time.",
  responses: { 200: jsonResponse(z.object({ data: DeviceSummary }), "Device counts") },
});

export const getDeviceRoute = apiRoute({
  method: "get",
  path: "/devices/{id}",
  operationId: "getDevice",
  tag,
  ability: "devices.read",
  summary: "Show a device",
  description:
    "One device in data, with its vendor, tags, last backup and last failure; a device outside your scope answers 404.",
  request: { params: DeviceParams },
  responses: { 200: jsonResponse(one, "The device") },
});

export const createDeviceRoute = apiRoute({
  method: "post",
  path: "/devices",
  operationId: "createDevice",
  tag,
  ability: "devices.write",
  summary: "Create a device",
  description:
    "With device_profile_id, the profile's vendor, template, category, credentials, port and tags apply to every field the body leaves out.",
  request: jsonBody(DeviceInput),
  responses: {
    201: jsonResponse(
      one.extend({
        warnings: z.array(z.string()).optional().openapi({
          description:
            "What keeps the device from being backed up as created (no connection template, e.g. a vendor with several and none chosen), and how to fix it",
        }),
      }),
      "The created device; Location names its URL",
    ),
  },
});

export const replaceDeviceRoute = apiRoute({
  method: "put",
  path: "/devices/{id}",
  operationId: "replaceDevice",
  tag,
  ability: "devices.write",
  summary: "Replace a device",
  description:
    "Fields the body leaves out return to their defaults, except passwords, which are kept unless sent (send null to clear one).",
  request: { params: DeviceParams, ...jsonBody(DeviceInput) },
  responses: { 200: jsonResponse(one, "The updated device") },
});

export const patchDeviceRoute = apiRoute({
  method: "patch",
  path: "/devices/{id}",
  operationId: "updateDevice",
  tag,
  ability: "devices.write",
  summary: "Update some fields of a device",
  description: "Only the fields sent change. device_tags and custom, when sent, replace the whole set.",
  request: { params: DeviceParams, ...jsonBody(DevicePatch) },
  responses: { 200: jsonResponse(one, "The updated device") },
});

export const deleteDeviceRoute = apiRoute({
  method: "delete",
  path: "/devices/{id}",
  operationId: "deleteDevice",
  tag,
  ability: "devices.write",
  summary: "Delete a device",
  description: "Deletes the device and its tag links.",
  request: { params: DeviceParams },
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});

export const enableDeviceRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/enable",
  operationId: "enableDevice",
  tag,
  ability: "devices.write",
  summary: "Enable a device so backups include it",
  description: "Scheduled and task backups take the device again from the next run.",
  request: { params: DeviceParams },
  responses: { 200: jsonResponse(one, "The device") },
});

export const disableDeviceRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/disable",
  operationId: "disableDevice",
  tag,
  ability: "devices.write",
  summary: "Disable a device so backups skip it",
  description: "Scheduled and task backups skip the device until it is enabled; its stored versions stay.",
  request: { params: DeviceParams },
  responses: { 200: jsonResponse(one, "The device") },
});

const bulkNote =
  "All or nothing: up to 1000 items in one transaction; a 422 names each failing item's index and field.";
/** 1000 devices of about 16 KiB each (long notes, many tags and custom fields); an id list fits the default. */
const BULK_DEVICES_BODY_LIMIT = 16 * 1024 * 1024;

export const bulkCreateDevicesRoute = apiRoute({
  method: "post",
  path: "/devices/bulk",
  operationId: "bulkCreateDevices",
  tag,
  ability: "devices.write",
  summary: "Create many devices",
  description: bulkNote,
  request: jsonBody(BulkCreate),
  bodyLimit: BULK_DEVICES_BODY_LIMIT,
  responses: { 201: jsonResponse(many, "The created devices, in request order") },
});

export const bulkUpdateDevicesRoute = apiRoute({
  method: "patch",
  path: "/devices/bulk",
  operationId: "bulkUpdateDevices",
  tag,
  ability: "devices.write",
  summary: "Update many devices",
  description: `${bulkNote} Each item carries its id and the fields to change.`,
  request: jsonBody(BulkUpdate),
  bodyLimit: BULK_DEVICES_BODY_LIMIT,
  responses: { 200: jsonResponse(many, "The updated devices, in request order") },
});

export const bulkDeleteDevicesRoute = apiRoute({
  method: "delete",
  path: "/devices/bulk",
  operationId: "bulkDeleteDevices",
  tag,
  ability: "devices.write",
  summary: "Delete many devices",
  description: bulkNote,
  request: jsonBody(BulkIds),
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});

export const bulkEnableDevicesRoute = apiRoute({
  method: "post",
  path: "/devices/bulk/enable",
  operationId: "bulkEnableDevices",
  tag,
  ability: "devices.write",
  summary: "Enable many devices",
  description: bulkNote,
  request: jsonBody(BulkIds),
  responses: { 200: jsonResponse(many, "The devices") },
});

export const bulkDisableDevicesRoute = apiRoute({
  method: "post",
  path: "/devices/bulk/disable",
  operationId: "bulkDisableDevices",
  tag,
  ability: "devices.write",
  summary: "Disable many devices",
  description: bulkNote,
  request: jsonBody(BulkIds),
  responses: { 200: jsonResponse(many, "The devices") },
});

// POST /devices/{id}/host-key/reset: accepting a device's new SSH host key.
/** OpenSSH's notation, as `ssh-keygen -lf` and the collector's host_key_changed message print it. */
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

export const HostKeyResetInput = z
  .object({
    fingerprint: z
      .string()
      .trim()
      .regex(FINGERPRINT, "must be an OpenSSH SHA-256 fingerprint: SHA256: followed by 43 base64 characters")
      .optional()
      .openapi({
        description: "Pin this key instead of trusting the next one the device presents",
        example: "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
      }),
  })
  .openapi("HostKeyResetInput");

const HostKey = z
  .object({
    device_id: z.number().int(),
    host_key_fingerprint: z
      .string()
      .nullable()
      .openapi({ description: "The pinned fingerprint; null until the next connection pins the key it sees" }),
    previous_fingerprint: z.string().nullable().openapi({ description: "What was pinned before this request" }),
  })
  .openapi("DeviceHostKey");

export const resetHostKeyRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/host-key/reset",
  operationId: "resetDeviceHostKey",
  tag: "Devices",
  ability: "devices.write",
  summary: "Accept a device's new SSH host key",
  description:
    "The collector pins a device's SSH host key on the first successful download and fails later downloads with " +
    "host_key_changed when the device presents another key (the job's message names both fingerprints). After checking " +
    "that the change is expected (a replaced device, a regenerated key), call this. Without a body the pinned key is " +
    'forgotten and the next connection pins whatever key the device presents; with {"fingerprint": "SHA256:..."} ' +
    "that key is pinned now, so only it is accepted (safer: compare it with `ssh-keygen -lf` on the device first).",
  request: {
    params: pathIds("id"),
    body: { required: false, content: { "application/json": { schema: HostKeyResetInput } } },
  },
  responses: { 200: jsonResponse(z.object({ data: HostKey }), "The device's host key pin after the reset") },
});

// POST /devices/{id}/detect: the API never connects to a device; it queues a detect job a collector runs
// (collector/detect-job.ts).
const DetectInput = z
  .strictObject({
    apply: z.boolean().default(false).openapi({
      description: "Set the proposed template, vendor and model on the device when the detection finds one",
      example: true,
    }),
  })
  .openapi("DeviceDetectInput");

export const detectDeviceRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/detect",
  operationId: "detectDevice",
  tag: "Devices",
  ability: "devices.write",
  summary: "Recognise a device's template, vendor, model and OS version",
  description:
    "Queues a detect job that a collector runs: it logs in with the device's credentials (over its template's protocol, " +
    "or SSH when it has none; Telnet on port 23 when SSH is refused, exec channels when a shell is), enters enable mode when " +
    "the credentials carry an enable password, reads the banner, the prompt and the built-in templates' version commands (and SNMP's sysDescr " +
    "and sysObjectID when the device's credential set has SNMP settings), and matches them against each built-in template's " +
    "`detect` section. The finished job's result holds `proposal` ({template_id, template, vendor, model, os_version, matched_by}, " +
    "or null when no template, or more than one equally, fits), `candidates`, `protocol`, `channels`, `enabled`, `banner`, `prompt`, " +
    "`commands_run` and `snmp`; " +
    "its outcome is success when there is a proposal, error when there is none, and the session's failure (auth_failed, " +
    'unreachable, prompt_not_found ...) when the login failed. With {"apply": true} the device\'s template, vendor and model ' +
    "are set to the proposal (`applied` in the result; the activity log records it). Answers 202 with the job and its status " +
    "URL; with wait=N (at most 60 seconds) it waits and answers 200 with the finished job. A detection already queued or " +
    "running for the device is reused when it has the same apply, else 409.",
  request: {
    params: pathIds("id"),
    query: z.object({ wait: WaitSeconds }),
    body: { required: false, content: { "application/json": { schema: DetectInput } } },
  },
  responses: {
    200: jsonResponse(z.object({ data: Job }), "The finished detect job: its result holds the proposal"),
    202: jsonResponse(z.object({ data: Job }), "Queued (or still running): poll status_url"),
    409: jsonResponse(
      z.object({ message: z.string() }),
      "A detection with another apply is already queued or running for the device",
    ),
  },
});

// GET /devices/{id}/last-failure: the transcript is kept in the failed job's result by the collector, secrets masked
// (collector/transcript.ts).
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

// Export and CSV import (export.ts, csv-import.ts, import-apply.ts).

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});
const csvColumnsNote =
  `Columns: the device fields (device_name, device_ip, device_vendor, ...), device_tags joined with '${TAG_SEPARATOR}', ` +
  "one custom.<key> column per custom attribute; has_password / has_enable_password, never a secret.";

export const exportDevicesRoute = apiRoute({
  method: "get",
  path: "/devices/export",
  operationId: "exportDevices",
  tag,
  ability: "devices.read",
  summary: "Export devices as CSV or JSON",
  description:
    "Every device the same query would list (filters, search, sort, fields), in scope, as a download named devices-<date>.csv " +
    `or .json; streamed, however many devices there are. ${csvColumnsNote} JSON is an array of device records.`,
  request: {
    query: listQuerySchema(deviceListSpec)
      .omit({ page: true, per_page: true, perPage: true })
      .extend({
        format: z
          .enum(EXPORT_FORMATS, { error: `must be one of: ${EXPORT_FORMATS.join(", ")}` })
          .optional()
          .openapi({ description: "csv (default) or json", example: "csv" }),
      }),
  },
  responses: {
    200: {
      description: "The devices, as an attachment",
      content: { "text/csv": { schema: z.string() }, "application/json": { schema: z.array(Device) } },
    },
  },
});

const RowOutcome = z.object({
  row: z
    .number()
    .int()
    .openapi({ description: "Line of the file the row starts on (the header is line 1)", example: 2 }),
  device_name: z.string(),
  action: z.enum(["create", "update", "reject"]),
  errors: z
    .record(z.string(), z.array(z.string()))
    .optional()
    .openapi({ description: "Why a rejected row was rejected, by column" }),
});

const DeviceImportReport = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    rejected: z.number().int(),
    rows: z.array(RowOutcome),
  })
  .openapi("DeviceImportReport");

export const importDevicesRoute = apiRoute({
  method: "post",
  path: "/devices/import",
  operationId: "importDevices",
  tag,
  ability: "devices.write",
  summary: "Import devices from CSV",
  description:
    "A CSV file whose first line names the columns, as the export writes them (read-only columns such as id or status are skipped). " +
    "Each row is matched to a device in your scope by device_name, in any case: a match is updated (only the columns the file has), " +
    "anything else is created. A blank cell clears the field, except in device_ip, enabled and the passwords, where it keeps the " +
    "current value. Good rows are written together in one transaction; bad rows are reported and skipped. The answer lists every row " +
    "and what happened to it; with dry_run=true nothing changes and the answer is the one a real run would give. " +
    `Limits: ${MAX_IMPORT_BYTES / 1024 / 1024} MB and ${MAX_IMPORT_ROWS} rows (413 beyond).`,
  bodyLimit: MAX_IMPORT_BYTES + MULTIPART_OVERHEAD,
  request: {
    query: z.object({
      dry_run: trueOrFalse("true: check every row and report, changing nothing"),
    }),
    body: {
      required: true,
      description: "The CSV file as the body, or as the field 'file' of a multipart form",
      content: {
        "text/csv": {
          schema: z.string().openapi({
            example: "device_name,device_ip,device_vendor,device_tags\ncore-rtr-01,192.0.2.1,Cisco,core|ams\n",
          }),
        },
        "multipart/form-data": {
          schema: { type: "object", properties: { file: { type: "string", format: "binary" } }, required: ["file"] },
        },
      },
    },
  },
  responses: {
    200: jsonResponse(
      z.object({ data: DeviceImportReport }),
      "What happened (or, in a dry run, would happen) to each row",
    ),
    413: errorResponse("The file is over 5 MB or has more than 10,000 rows"),
    415: errorResponse("The body is neither text/csv nor a multipart form"),
  },
});
