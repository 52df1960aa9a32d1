import { csvText } from "../devices/index.ts";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { Db } from "../../db/client.ts";
import { pickFields, type ListQuery } from "../../platform/http/list.ts";
import { resultsAfter, type ResultOut } from "./results.ts";

export const EXPORT_FORMATS = ["csv", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Results per query: 100,000 results are 200 queries of this size, never one result set held whole. */
const PAGE_SIZE = 500;

/** The CSV's columns: a result's fields, with its rules as the failed ones' descriptions. */
export const CSV_COLUMNS = [
  "id",
  "evaluated_at",
  "policy_id",
  "policy_name",
  "assignment_id",
  "device_id",
  "device_name",
  "command",
  "config_id",
  "config_version",
  "policy_revision",
  "status",
  "score",
  "passed_rules",
  "total_rules",
  "failed_rules",
] as const;

/** Failed rules in one CSV cell: their descriptions, joined with " | ". */
export const FAILED_RULES_SEPARATOR = " | ";

const csvRow = (r: ResultOut): string[] =>
  CSV_COLUMNS.map((c) => {
    if (c === "failed_rules")
      return r.rules
        .filter((rule) => !rule.passed)
        .map((rule) => rule.description)
        .join(FAILED_RULES_SEPARATOR);
    const v = r[c];
    return v === null ? "" : String(v);
  });

/**
 * Every result the query's filters select, in id order, a page at a time: a cursor on the id, so results added
 * while the export runs never shift a page (those with higher ids than the cursor are included).
 */
async function* pages(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<ResultOut[]> {
  for (let after = 0; ; ) {
    const rows = await resultsAfter(db, scope, q.where, after, PAGE_SIZE);
    if (rows.length) yield rows;
    if (rows.length < PAGE_SIZE) return;
    after = rows[rows.length - 1]!.id;
  }
}

async function* csvChunks(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<string> {
  let header = csvText([[...CSV_COLUMNS]]);
  for await (const page of pages(db, scope, q)) {
    yield header + csvText(page.map(csvRow));
    header = "";
  }
  if (header) yield header;
}

async function* jsonChunks(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<string> {
  let opened = false;
  for await (const page of pages(db, scope, q)) {
    yield (opened ? ",\n" : "[\n") + page.map((r) => JSON.stringify(pickFields(r, q.fields))).join(",\n");
    opened = true;
  }
  yield opened ? "\n]\n" : "[]\n";
}

/**
 * The export body, streamed: a page is read only when the client has taken the last. The first chunk is read
 * before the answer starts, so a query that fails at once still answers with a JSON error.
 */
export async function exportResults(
  db: Db,
  scope: DeviceScope,
  q: ListQuery,
  format: ExportFormat,
): Promise<ReadableStream<Uint8Array>> {
  const chunks = format === "csv" ? csvChunks(db, scope, q) : jsonChunks(db, scope, q);
  const first = await chunks.next();
  const encoder = new TextEncoder();
  let pending: string | undefined = first.done ? undefined : first.value;
  return new ReadableStream({
    async pull(controller) {
      if (pending !== undefined) {
        controller.enqueue(encoder.encode(pending));
        pending = undefined;
        return;
      }
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}
