import { createClient, type Client } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import * as schema from "./schema/index.ts";
import { withWriteTurns } from "./write-turns.ts";
import type { DatabaseLocation } from "./migrate.ts";

/** The database, with the client it runs on ('$client', as drizzle() returns it). */
export type Db = LibSQLDatabase<typeof schema> & { $client: Client };
/** A transaction handle: services take `DbOrTx` so one write path serves single and bulk requests. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;
/** An open database and where it is: migrations open their own connection to the same place. */
export type Database = { db: Db; client: Client; location: DatabaseLocation };

/**
 * Opens the database. A `file:` URL gets WAL (readers never wait for the writer; the mode is stored in the
 * file, so every pooled connection has it) and a busy timeout on every pooled connection, so concurrent
 * writers from the API and collectors queue instead of failing with SQLITE_BUSY. libSQL turns foreign keys on
 * for every connection by default, which the ON DELETE rules in the schema rely on.
 */
export async function openDatabase(url: string, authToken?: string): Promise<Database> {
  const local = url.startsWith("file:");
  const raw = createClient({ url, authToken, ...(local ? { timeout: 10_000 } : {}) });
  // Remote servers take concurrent writes themselves; the local driver needs them in turns (write-turns.ts).
  const client = local ? withWriteTurns(raw) : raw;
  if (local) {
    // Only a new, empty file takes this, and only before WAL writes its header: such a database hands free
    // pages back to the file system when storage maintenance asks (src/modules/configs/maintenance.ts).
    await client.execute("PRAGMA auto_vacuum = INCREMENTAL");
    await client.execute("PRAGMA journal_mode = WAL");
  }
  return { db: drizzle(client, { schema }), client, location: { url, authToken } };
}
