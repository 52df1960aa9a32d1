import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { listQuerySchema, parseListQuery } from "../../platform/http/list.ts";
import { apiRoute, ErrorBody, jsonResponse, trueOrFalse } from "../../platform/http/route.ts";
import { parseCsvTable, TAG_SEPARATOR } from "./csv.ts";
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, MULTIPART_OVERHEAD, planCsvImport, readCsvUpload } from "./csv-import.ts";
import { EXPORT_FORMATS, exportStream } from "./export.ts";
import { applyImport } from "./import-apply.ts";
import { Device } from "./schemas.ts";
import { deviceListSpec } from "./service.ts";

const tag = "Devices";
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

const ImportReport = z
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
    200: jsonResponse(z.object({ data: ImportReport }), "What happened (or, in a dry run, would happen) to each row"),
    413: errorResponse("The file is over 5 MB or has more than 10,000 rows"),
    415: errorResponse("The body is neither text/csv nor a multipart form"),
  },
});

/** Registered before /devices/{id}, so "export" and "import" are not read as ids. */
export function registerDeviceImportExportRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(exportDevicesRoute, async (c) => {
    const format = c.req.valid("query").format ?? "csv";
    const q = parseListQuery(c, deviceListSpec);
    const body = await exportStream(c.var.services.db, c.var.auth.scope, q, format);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="devices-${date}.${format}"`,
    });
  });

  app.openapi(importDevicesRoute, async (c) => {
    const dryRun = c.req.valid("query").dry_run === "true";
    const table = parseCsvTable(await readCsvUpload(c.req.raw), MAX_IMPORT_ROWS);
    const { db, secrets, clock } = c.var.services;
    const ctx = {
      db,
      secrets,
      actor: c.var.auth,
      scope: c.var.auth.scope,
      abilities: c.var.auth.abilities,
      now: clock.now(),
    };
    const planned = await planCsvImport(db, ctx.scope, table);
    return c.json({ data: await applyImport(ctx, planned, { dryRun }) }, 200);
  });
}
