import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { csvText } from "../devices/index.ts";

/** Every report answers JSON rows, or the same rows as CSV (one column per field, in this order). */
export type Cell = string | number | null;
export type Report<R extends Record<string, Cell>> = { columns: (keyof R & string)[]; rows: R[] };

export const formatParam = z.enum(["json", "csv"], { error: "must be json or csv" }).optional().openapi({
  description: "csv answers the same rows as CSV (also chosen by Accept: text/csv); default json",
  example: "csv",
});

const wantsCsv = (c: Context, format: string | undefined) =>
  format === "csv" || (format === undefined && /\btext\/csv\b/i.test(c.req.header("accept") ?? ""));

/** The report as `{"data": [...]}`, or as CSV through the one writer that neutralises formulas. */
export function reportAnswer<R extends Record<string, Cell>>(
  c: Context,
  name: string,
  format: string | undefined,
  report: Report<R>,
) {
  if (!wantsCsv(c, format)) return c.json({ data: report.rows }, 200);
  const lines = [
    report.columns,
    ...report.rows.map((r) => report.columns.map((k) => (r[k] === null ? "" : String(r[k])))),
  ];
  return c.body(csvText(lines), 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${name}.csv"`,
  });
}

/** The two answers a report route documents. */
export const reportResponse = <T extends z.ZodType>(row: T, description: string) => ({
  description,
  content: { "application/json": { schema: z.object({ data: z.array(row) }) }, "text/csv": { schema: z.string() } },
});
