import { z } from "@hono/zod-openapi";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { deviceListSpec } from "./service.ts";
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
