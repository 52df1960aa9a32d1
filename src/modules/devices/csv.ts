import { CsvError, parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { ApiError } from "../../platform/http/errors.ts";
import { CUSTOM_KEY, CUSTOM_KEY_RULE, DEVICE_FIELDS, type DeviceOut } from "./schemas.ts";

/**
 * The CSV shape of a device, shared by export and import so an exported file imports back unchanged:
 * one column per device field, tags joined with `|`, each custom attribute its own `custom.<key>` column.
 */
export const TAG_SEPARATOR = "|";
export const CUSTOM_PREFIX = "custom.";

/** Columns an import may set. Secrets are accepted here and never exported. */
export const WRITABLE_COLUMNS = [
  "device_name",
  "device_ip",
  "device_vendor",
  "device_model",
  "device_category_id",
  "device_template_id",
  "device_cred_id",
  "device_snippet_cred_id",
  "device_port_override",
  "device_profile_id",
  "device_tags",
  "device_username",
  "device_password",
  "device_enable_password",
  "notes",
  "enabled",
] as const;
export type WritableColumn = (typeof WRITABLE_COLUMNS)[number];

/** Columns only an export writes; an import skips them, so an exported file can be edited and sent back. */
export const READ_ONLY_COLUMNS: readonly string[] = DEVICE_FIELDS.filter(
  (f) => f !== "custom" && !(WRITABLE_COLUMNS as readonly string[]).includes(f),
);

/** Export columns in the API's field order; `custom` expands into one column per attribute key. */
export function exportColumns(fields: readonly string[] | null, customKeys: string[]): string[] {
  const chosen = fields ?? DEVICE_FIELDS;
  return DEVICE_FIELDS.filter((f) => chosen.includes(f)).flatMap((f) =>
    f === "custom" ? customKeys.map((k) => CUSTOM_PREFIX + k) : [f],
  );
}

const cell = (value: unknown): string => (value === null || value === undefined ? "" : String(value));

export function deviceCsvRow(device: DeviceOut, columns: string[]): string[] {
  return columns.map((column) => {
    if (column.startsWith(CUSTOM_PREFIX)) return cell(device.custom[column.slice(CUSTOM_PREFIX.length)]);
    if (column === "device_tags") return device.device_tags.join(TAG_SEPARATOR);
    return cell(device[column as keyof DeviceOut]);
  });
}

/**
 * A cell a spreadsheet would run as a formula starts with `=`, `+`, `-`, `@`, a tab or a carriage return
 * (OWASP, "CSV Injection"). Quotes before it are counted in, so that a value which itself starts with `'=`
 * is escaped too and the import's unescape below is the exact inverse: every value survives export -> import.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
const ESCAPED_FORMULA = /^'+[=+\-@\t\r]/;

/**
 * OWASP's neutralisation: a cell a spreadsheet would take for a formula gets a leading single quote (and
 * csvText quotes it), so it opens as text. Legitimate values are prefixed too: a negative number, or a note
 * that is just `-`; that is the accepted price.
 */
export const neutraliseFormula = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);

/**
 * The import's inverse of neutraliseFormula, for a cell already trimmed: a quote before a formula's first
 * character is the export's escape, and is dropped. Secrets are never exported, so they are never unescaped.
 */
export const unescapeFormula = (cell: string): string => (ESCAPED_FORMULA.test(cell) ? cell.slice(1) : cell);

/**
 * CSV text for some rows, each line ended with CRLF as RFC 4180 and spreadsheets expect. Every CSV the service
 * writes goes through here, so every cell is neutralised against formula injection.
 */
export const csvText = (rows: string[][]): string =>
  stringify(
    rows.map((row) => row.map(neutraliseFormula)),
    { record_delimiter: "windows", quoted_match: ESCAPED_FORMULA },
  );

export type CsvColumn =
  | { name: string; kind: "field"; field: WritableColumn }
  | { name: string; kind: "custom"; key: string }
  | { name: string; kind: "ignored" };
export type CsvRecord = { line: number; cells: string[] };
export type CsvTable = { columns: CsvColumn[]; records: CsvRecord[] };

/**
 * Reads the columns a header names. Names are matched in any case (custom keys exactly); a name that is
 * neither a device field nor `custom.<key>` is a 422 listing the allowed ones, like an unknown filter.
 */
function readHeader(header: string[]): CsvColumn[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const columns = header.map((raw): CsvColumn => {
    const trimmed = raw.trim();
    const custom = trimmed.toLowerCase().startsWith(CUSTOM_PREFIX);
    const name = custom ? CUSTOM_PREFIX + trimmed.slice(CUSTOM_PREFIX.length) : trimmed.toLowerCase();
    if (seen.has(name)) problems.push(`column '${trimmed}' appears twice`);
    seen.add(name);
    if (custom) {
      const key = name.slice(CUSTOM_PREFIX.length);
      if (!CUSTOM_KEY.test(key)) problems.push(`column '${trimmed}': ${CUSTOM_KEY_RULE}`);
      return { name, kind: "custom", key };
    }
    if ((WRITABLE_COLUMNS as readonly string[]).includes(name))
      return { name, kind: "field", field: name as WritableColumn };
    if (READ_ONLY_COLUMNS.includes(name)) return { name, kind: "ignored" };
    problems.push(
      `column '${trimmed}' is not a device field; use any of: ${WRITABLE_COLUMNS.join(", ")}, custom.<key>`,
    );
    return { name, kind: "ignored" };
  });
  if (!seen.has("device_name")) problems.push("the header has no device_name column, which matches rows to devices");
  if (problems.length) throw ApiError.validation({ header: problems.map((p) => `header: ${p}`) });
  return columns;
}

/**
 * Parses an uploaded file: the first line names the columns, every later line is a device. Each record keeps
 * the line it starts on, for the report. Blank lines and rows whose cells are all empty (the trailing `,,,`
 * rows spreadsheets leave) are skipped.
 */
export function parseCsvTable(text: string, maxRecords: number): CsvTable {
  // One line ending throughout, so the parser's line count is the line number an editor shows.
  const normalized = text.replace(/\r\n?/g, "\n");
  let parsed: { record: string[]; info: { lines: number } }[];
  try {
    parsed = parse(normalized, {
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as typeof parsed;
  } catch (err) {
    if (err instanceof CsvError) {
      const line: unknown = (err as CsvError & { lines?: unknown }).lines;
      const where = typeof line === "number" ? ` (line ${line})` : "";
      throw ApiError.validation({ file: [`file is not valid CSV${where}: ${err.message.replace(/^[^:]*:\s*/, "")}`] });
    }
    throw err;
  }
  const [header, ...rest] = parsed;
  if (!header)
    throw ApiError.validation({
      file: ["file is empty: its first line must name the columns, e.g. device_name,device_ip"],
    });
  const columns = readHeader(header.record);
  const records = rest
    .filter((r) => r.record.some((c) => c.trim() !== ""))
    .map((r) => ({
      // info.lines is where the record ends; quoted line breaks inside it moved the end down.
      line: r.info.lines - r.record.reduce((n, c) => n + (c.match(/\n/g)?.length ?? 0), 0),
      cells: r.record,
    }));
  if (records.length > maxRecords) {
    throw new ApiError(
      413,
      `The file has ${records.length} device rows; an import takes at most ${maxRecords}: split it into several files`,
    );
  }
  return { columns, records };
}
