import type { Client } from "@libsql/client";
// The /web entry: the same drizzle() over any client it is given, without drizzle-orm/libsql's import of the
// native client (src/db/driver.ts loads whichever a URL needs).
import { drizzle } from "drizzle-orm/libsql/web";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import * as schema from "./schema/index.ts";
import { openClient } from "./driver.ts";
import { retryingOnServer } from "./remote-retry.ts";
import { newThreadWriteLock, withWriteTurns, type ThreadWriteLock, type WriteWait } from "./write-turns.ts";
import type { DatabaseLocation } from "./migrate.ts";

/** The database, with the client it runs on ('$client', as drizzle() returns it). */
export type Db = LibSQLDatabase<typeof schema> & { $client: Client };
/** A transaction handle: services take `DbOrTx` so one write path serves single and bulk requests. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;
/**
 * An open database and where it is: migrations open their own connection to the same place. A thread of this
 * process that writes to it opens it with `threadLock`, so the two take turns (write-turns.ts).
 */
export type Database = {
  db: Db;
  client: Client;
  location: DatabaseLocation;
  threadLock: ThreadWriteLock;
  writeWait: WriteWait;
};

/**
 * Opens the database. A `file:` URL gets WAL (readers never wait for the writer; the mode is stored in the
 * file, so every connection has it), and its writes over one connection of their own (write-turns.ts) that
 * waits for other connections' locks without blocking the thread and commits with synchronous=NORMAL: under
 * WAL a commit then survives the process being killed, and an OS crash or power cut can undo the last commits
 * but never corrupt the file. FULL's fsync on every commit cost 1-2 ms of blocked event loop per transaction,
 * twice per download. A download undone that way is undone with its job, which its lease then runs again.
 * libSQL turns foreign keys on for every connection by default, which the ON DELETE rules in the schema rely on.
 * Every local connection keeps its statements prepared (statement-cache.ts).
 */
export async function openDatabase(
  url: string,
  authToken?: string,
  threadLock = newThreadWriteLock(),
  writeWait: WriteWait = {},
): Promise<Database> {
  if (!url.startsWith("file:")) {
    // Remote servers take concurrent writes, and choose their durability, themselves; a busy one is waited out
    // as long as the embedded file's writes wait for another process (remote-retry.ts).
    const client = retryingOnServer(await openClient({ url, authToken }), writeWait.busyTimeoutMs ?? 10_000);
    return { db: drizzle(client, { schema }), client, location: { url, authToken }, threadLock, writeWait };
  }
  // Loaded here, not imported: it patches the native driver, which a remote database never loads.
  (await import("./statement-cache.ts")).keepPreparedStatements();
  // The writer has no busy timeout (withWriteTurns waits for other connections' locks itself), and is opened
  // again whenever a lock turned it away: each time it needs synchronous set.
  const openWriter = async () => {
    const writer = await openClient({ url, timeout: 0, concurrency: 1 });
    await writer.execute("PRAGMA synchronous = NORMAL");
    return writer;
  };
  const client = withWriteTurns(await openClient({ url, timeout: 10_000 }), openWriter, { ...writeWait, threadLock });
  // Pragmas are not reads, so these go over the writer. Only a new, empty file takes auto_vacuum, and only
  // before WAL writes its header: such a database hands free pages back to the file system when storage
  // maintenance asks (src/modules/configs/storage/maintenance.ts).
  await client.execute("PRAGMA auto_vacuum = INCREMENTAL");
  await client.execute("PRAGMA journal_mode = WAL");
  return { db: drizzle(client, { schema }), client, location: { url, authToken }, threadLock, writeWait };
}
