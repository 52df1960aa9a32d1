import { openClient } from "./driver.ts";

/**
 * Folds the write-ahead log into the database file and empties it (`PRAGMA wal_checkpoint(TRUNCATE)`), over a
 * connection of its own, once the process has closed its others: after a clean stop `netkeep.db` alone holds
 * every committed row, so a plain copy of the file is whole. Returns false when another process (a collector
 * still running against the same file) kept the checkpoint from finishing within `timeoutMs`; that process
 * checkpoints in turn when it stops. A remote database (libsql://, http(s)://) keeps its own log: true.
 */
export async function checkpointWal(url: string, timeoutMs = 5000): Promise<boolean> {
  if (!url.startsWith("file:")) return true;
  const client = await openClient({ url, timeout: timeoutMs });
  try {
    const { rows } = await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    return Number(rows[0]?.[0] ?? 1) === 0;
  } finally {
    client.close();
  }
}
