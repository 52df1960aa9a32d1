/**
 * Why something failed, for a message people read. A failed query's own message carries its SQL and its
 * parameters, which can be a whole configuration text: its driver's reason (the cause) is given instead.
 */
export const failureReason = (err: unknown): string =>
  err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);

/**
 * Whether the disk (or the database's size cap) refused to grow a file: SQLite's SQLITE_FULL, or the system's
 * ENOSPC (no space left) and EDQUOT (quota used up), also as the cause of another error (drizzle wraps the
 * driver's). Nothing was written; the operator must free space before anything is.
 */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? "");
    if (code.startsWith("SQLITE_FULL") || code === "ENOSPC" || code === "EDQUOT") return true;
  }
  return false;
}

/** What a full disk means for whoever asked for a write: said the same way by the API, the CLI and the health checks. */
export const DISK_FULL_REASON =
  "the disk holding the database and STORAGE_DIR is full (or the database reached its size limit): nothing was written; free space, then retry";
