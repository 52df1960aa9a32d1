/** Left-aligned columns two spaces apart, for terminals and for `grep`/`awk` alike. */
export function formatTable(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** Console timestamps: ISO-8601 UTC to the second, or a word for "none". */
export const formatTime = (date: Date | null, none: string) =>
  date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : none;
