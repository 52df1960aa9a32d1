import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { devices, vendors } from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { pickFields, type ListQuery } from "../../platform/http/list.ts";
import { csvText, deviceCsvRow, exportColumns } from "./csv.ts";
import type { DeviceOut } from "./schemas.ts";
import { listDevices } from "./service.ts";

export const EXPORT_FORMATS = ["csv", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Devices per query: a 10,000-device export is 20 queries of this size, never one result held whole. */
const PAGE_SIZE = 500;

/** The custom attribute keys the exported devices use, so the CSV header can name them before any row. */
async function customKeys(db: Db, scope: DeviceScope, q: ListQuery): Promise<string[]> {
  const rows = await db
    .selectDistinct({ key: sql<string>`je.key` })
    .from(devices)
    .leftJoin(vendors, eq(vendors.id, devices.vendorId))
    .innerJoin(sql`json_each(${devices.custom}) as je`, sql`1`)
    .where(and(deviceScopeCondition(scope), q.where))
    .orderBy(sql`je.key`);
  return rows.map((r) => r.key);
}

/**
 * Every device the list query selects, in its order, a page at a time. Offset paging over the list's own
 * sort (which always ends in id) keeps the order stable; a device added mid-export may be missed, as with
 * any paged read.
 */
async function* devicePages(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<DeviceOut[]> {
  for (let page = 1; ; page++) {
    const { rows } = await listDevices(db, scope, { ...q, page, perPage: PAGE_SIZE });
    if (rows.length) yield rows;
    if (rows.length < PAGE_SIZE) return;
  }
}

/** A byte stream that asks for the next page only when the client has taken the last one. */
function streamOf(chunks: AsyncIterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await chunks.return?.(undefined);
    },
  });
}

async function* csvChunks(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<string> {
  const wantsCustom = !q.fields || q.fields.includes("custom");
  const columns = exportColumns(q.fields, wantsCustom ? await customKeys(db, scope, q) : []);
  let header = csvText([columns]);
  for await (const page of devicePages(db, scope, q)) {
    yield header + csvText(page.map((d) => deviceCsvRow(d, columns)));
    header = "";
  }
  if (header) yield header;
}

async function* jsonChunks(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<string> {
  let opened = false;
  for await (const page of devicePages(db, scope, q)) {
    yield (opened ? ",\n" : "[\n") + page.map((d) => JSON.stringify(pickFields(d, q.fields))).join(",\n");
    opened = true;
  }
  yield opened ? "\n]\n" : "[]\n";
}

/**
 * The export body. The first chunk (header and first page) is read before the response starts, so a query
 * that fails at once still answers with a JSON error rather than a cut-off download.
 */
export async function exportStream(
  db: Db,
  scope: DeviceScope,
  q: ListQuery,
  format: ExportFormat,
): Promise<ReadableStream<Uint8Array>> {
  const chunks = format === "csv" ? csvChunks(db, scope, q) : jsonChunks(db, scope, q);
  const first = await chunks.next();
  async function* rest(): AsyncGenerator<string> {
    if (first.done) return;
    yield first.value;
    yield* chunks;
  }
  return streamOf(rest());
}
