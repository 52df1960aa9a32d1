import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { ApiError, FieldErrorBag, type FieldErrors } from "../../platform/http/errors.ts";
import { zodToApiError } from "../../platform/http/validation.ts";
import { TAG_SEPARATOR, unescapeFormula, type CsvColumn, type CsvTable, type WritableColumn } from "./csv.ts";
import { findDevicesByName, type ExistingDevice, type PlannedRow } from "./import-apply.ts";
import { DeviceInput, DevicePatch } from "./schemas.ts";

export const MAX_IMPORT_BYTES = 5 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 10_000;
export const MULTIPART_OVERHEAD = 64 * 1024;

const CSV_TYPES = ["text/csv", "application/csv", "text/plain"];
const HOW_TO_SEND =
  "send the file as the body with Content-Type: text/csv (curl -H 'Content-Type: text/csv' --data-binary @devices.csv), or as the field 'file' of a multipart/form-data body (curl -F file=@devices.csv)";
const megabytes = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
const tooLarge = () =>
  new ApiError(
    413,
    `The file is larger than ${megabytes(MAX_IMPORT_BYTES)}, the most an import takes: split it into several files`,
  );

/** Reads at most `limit` bytes of a body, so an oversized upload is refused without being held in memory. */
async function readCapped(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return bytes;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw ApiError.validation({ file: ["file is not UTF-8 text; save it as 'CSV UTF-8' and send it again"] });
  }
}

/** The uploaded CSV as text: a text/csv body, or the `file` field of a multipart form. */
export async function readCsvUpload(request: Request): Promise<string> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (CSV_TYPES.includes(type)) return decodeUtf8(await readCapped(request, MAX_IMPORT_BYTES));
  if (type === "multipart/form-data") {
    const bytes = await readCapped(request, MAX_IMPORT_BYTES + MULTIPART_OVERHEAD);
    let form: FormData;
    try {
      form = await new Response(bytes, {
        headers: { "content-type": request.headers.get("content-type")! },
      }).formData();
    } catch {
      throw new ApiError(400, "Malformed multipart body: send the file as the field 'file'");
    }
    const file = form.get("file");
    if (file === null)
      throw ApiError.validation({ file: ["file is required: the multipart form has no field 'file'"] });
    const content =
      typeof file === "string" ? new TextEncoder().encode(file) : new Uint8Array(await file.arrayBuffer());
    if (content.byteLength > MAX_IMPORT_BYTES) throw tooLarge();
    return decodeUtf8(content);
  }
  throw new ApiError(415, `Unsupported Media Type${type ? ` ${type}` : ""}: ${HOW_TO_SEND}`);
}

type Cells = Map<CsvColumn, string>;

const WHOLE_NUMBER_FIELDS: ReadonlySet<WritableColumn> = new Set([
  "device_category_id",
  "device_template_id",
  "device_cred_id",
  "device_snippet_cred_id",
  "device_port_override",
  "device_profile_id",
]);
const SECRET_FIELDS: ReadonlySet<WritableColumn> = new Set(["device_password", "device_enable_password"]);
/** Fields a blank cell leaves as they are, rather than clearing them (a device's vendor cannot be cleared). */
const KEPT_WHEN_BLANK: ReadonlySet<WritableColumn> = new Set([
  ...SECRET_FIELDS,
  "device_ip",
  "device_vendor",
  "enabled",
]);
const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  yes: true,
  "1": true,
  false: false,
  no: false,
  "0": false,
};

/** What a blank cell sets a field to on an update: the value a new device starts with. */
const emptyValue = (field: WritableColumn) =>
  field === "device_tags" ? [] : WHOLE_NUMBER_FIELDS.has(field) ? null : "";

/** A cell as the import reads it: trimmed, and without the quote an export put before a formula character. */
const readCell = (raw: string) => unescapeFormula(raw.trim());

/**
 * One row's cells as an API body. A blank cell means "none" (it clears the field on an update), except in
 * device_ip, enabled and the passwords, where it leaves the value as it is (or its default on a new device):
 * a spreadsheet column of passwords with gaps must not wipe the passwords it lacks.
 */
function rowToBody(cells: Cells, existing: ExistingDevice | undefined, bag: FieldErrorBag): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  let custom: ExistingDevice["custom"] | undefined;
  for (const [column, raw] of cells) {
    if (column.kind === "ignored") continue;
    if (column.kind === "custom") {
      const value = readCell(raw);
      custom ??= existing ? { ...existing.custom } : {};
      const before = custom[column.key];
      if (value === "") delete custom[column.key];
      // An unchanged cell keeps the stored value's type (a number stays a number through export and import).
      else if (before === undefined || before === null || String(before) !== value) custom[column.key] = value;
      continue;
    }
    const field = column.field;
    if (field === "device_name") continue;
    const value = SECRET_FIELDS.has(field) ? raw : readCell(raw);
    if (value === "") {
      if (existing && !KEPT_WHEN_BLANK.has(field)) body[field] = emptyValue(field);
    } else if (WHOLE_NUMBER_FIELDS.has(field)) {
      if (/^\d+$/.test(value)) body[field] = Number(value);
      else bag.add(field, `${field} must be a whole number`);
    } else if (field === "enabled") {
      const flag = BOOLEAN_WORDS[value.toLowerCase()];
      if (flag === undefined) bag.add(field, `${field} must be true or false`);
      else body[field] = flag;
    } else if (field === "device_tags") {
      body[field] = value
        .split(TAG_SEPARATOR)
        .map((t) => t.trim())
        .filter(Boolean);
    } else body[field] = value;
  }
  if (custom) body.custom = custom;
  return body;
}

/**
 * Turns a parsed file into planned rows: each row is matched to a device in the caller's scope by
 * device_name (any case) and becomes an update of the columns the file has, or else a create. Rows are
 * checked against the same schema as the API body; what fails is reported per row, never fatal.
 */
export async function planCsvImport(db: DbOrTx, scope: DeviceScope, table: CsvTable): Promise<PlannedRow[]> {
  const nameIndex = table.columns.findIndex((c) => c.kind === "field" && c.field === "device_name");
  const nameOf = (cells: string[]) => readCell(cells[nameIndex] ?? "");
  const existing = await findDevicesByName(db, scope, table.records.map((r) => nameOf(r.cells)).filter(Boolean));
  const firstRow = new Map<string, number>();

  return table.records.map(({ line, cells }): PlannedRow => {
    const name = nameOf(cells);
    const reject = (errors: FieldErrors): PlannedRow => ({ row: line, device_name: name, errors });
    if (cells.length !== table.columns.length) {
      return reject({
        row: [`row has ${cells.length} field${cells.length === 1 ? "" : "s"}; the header has ${table.columns.length}`],
      });
    }
    if (!name) return reject({ device_name: ["device_name is required"] });
    const key = nameKey(name);
    const earlier = firstRow.get(key);
    if (earlier !== undefined)
      return reject({ device_name: [`device_name '${name}' repeats row ${earlier} of this file`] });
    firstRow.set(key, line);

    const match = existing.get(key);
    const bag = new FieldErrorBag();
    const body = rowToBody(new Map(table.columns.map((c, i) => [c, cells[i]!])), match, bag);
    const parsed = match ? DevicePatch.safeParse(body) : DeviceInput.safeParse({ ...body, device_name: name });
    const errors: FieldErrors = { ...(parsed.success ? {} : zodToApiError(parsed.error).errors) };
    for (const [field, messages] of Object.entries(bag.errors)) errors[field] = [...(errors[field] ?? []), ...messages];
    if (Object.keys(errors).length) return reject(errors);
    if (match) return { row: line, device_name: name, update: { ...(parsed.data as object), id: match.id } };
    return { row: line, device_name: name, create: parsed.data as PlannedRow["create"] };
  });
}
