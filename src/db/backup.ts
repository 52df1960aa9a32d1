import { createHash } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import type { Client } from "@libsql/client";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { openClient } from "./driver.ts";
import { migrationsFolder } from "./migrate.ts";

/**
 * Database backups of the embedded SQLite file: `VACUUM INTO` on a connection of its own (one read transaction,
 * so the copy is the database as of one instant while the API and collectors keep writing, and no writer here
 * waits for it), gzip, and a SHA-256 of the compressed file beside it as `<file>.sha256` in sha256sum's format,
 * so `sha256sum -c` checks it too. The app key is never in a backup: it lives in APP_KEY or storage/app.key.
 */

/** Something the operator must fix or know; the message says what, on one line. */
export class BackupRefused extends Error {}

export const BACKUPS_DIR = "backups";
const NAME = /^netkeep-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z\.db\.gz$/;

/** A backup's name: it is also its id in the API, so it never carries a path. */
export const isBackupName = (name: string) => NAME.test(name);
export const backupName = (at: Date) => `netkeep-${at.toISOString().replace(/[-:.]/g, "")}.db.gz`;
/** When a backup in storage/backups/ was taken, from its name (a copied file's mtime would not say). */
const takenAt = (name: string) => {
  const [, y, mo, d, h, mi, s, ms] = NAME.exec(name)!;
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
};
export const backupsDir = (storageDir: string) => join(storageDir, BACKUPS_DIR);
export const checksumPath = (file: string) => `${file}.sha256`;

/** The server's own tools, since a libSQL server's file is not ours to copy. */
export const REMOTE_DATABASE_ADVICE =
  "the database is a libSQL server (DATABASE_URL is not a file: URL), whose file netkeep cannot copy consistently: " +
  "back it up with the server's own means (for sqld, its bottomless replication to S3 or a copy of its data directory while it is stopped; " +
  "for Turso, its point-in-time restore or `turso db shell <db> .dump`)";

/** The path of a file: URL's database, or null for a libSQL server. */
export function databaseFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith("file:")) return null;
  return databaseUrl.slice("file:".length).split("?")[0]!;
}

export type BackupFile = { name: string; path: string; bytes: number; sha256: string; createdAt: Date };

/** Passes bytes through, hashing and counting them. */
function hashing(hash: ReturnType<typeof createHash>, seen: { bytes: number }) {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      seen.bytes += chunk.length;
      done(null, chunk);
    },
  });
}

/**
 * Writes a compressed, checksummed copy of the database to `out` (under storage/backups/ when not given).
 * Nothing appears under the final name until the copy is whole.
 */
export async function writeBackup(options: {
  databaseUrl: string;
  storageDir: string;
  now: Date;
  out?: string;
}): Promise<BackupFile> {
  const source = databaseFile(options.databaseUrl);
  if (!source) throw new BackupRefused(REMOTE_DATABASE_ADVICE);
  if (!existsSync(source)) throw new BackupRefused(`there is no database at ${source} to back up`);
  const out = options.out ?? join(backupsDir(options.storageDir), backupName(options.now));
  if (existsSync(out)) throw new BackupRefused(`${out} already exists; choose another --out or remove it`);
  const snapshot = `${out}.snapshot`;
  const partial = `${out}.partial`;
  rmSync(snapshot, { force: true });
  mkdirSync(dirname(out), { recursive: true, mode: 0o700 });
  removeBackupLeftovers(options.storageDir);
  // Every file of a backup is the owner's alone (mode 0600, like app.key): it holds the whole database. VACUUM
  // INTO writes into an existing file when it is empty, so the snapshot is created here with that mode.
  writeFileSync(snapshot, "", { mode: PRIVATE_FILE, flag: "wx" });
  try {
    const client = await openClient({ url: options.databaseUrl, timeout: 10_000 });
    try {
      await client.execute({ sql: "VACUUM INTO ?", args: [snapshot] });
    } finally {
      client.close();
    }
    const hash = createHash("sha256");
    const seen = { bytes: 0 };
    await pipeline(
      createReadStream(snapshot),
      createGzip(),
      hashing(hash, seen),
      createWriteStream(partial, { mode: PRIVATE_FILE }),
    );
    const sha256 = hash.digest("hex");
    renameSync(partial, out);
    writeFileSync(checksumPath(out), `${sha256}  ${basename(out)}\n`, { mode: PRIVATE_FILE });
    return { name: basename(out), path: out, bytes: seen.bytes, sha256, createdAt: options.now };
  } finally {
    rmSync(snapshot, { force: true });
    rmSync(partial, { force: true });
  }
}

const PRIVATE_FILE = 0o600;

/** A backup's working files (its uncompressed copy and the compressed one being written), by the backup's name. */
const LEFTOVER = /^(netkeep-.+\.db\.gz)\.(snapshot|partial)$/;
/** Working files untouched this long belong to no running backup: one writes to them every moment it runs. */
export const LEFTOVER_AGE_MS = 10 * 60_000;

/**
 * Deletes what backups that were stopped mid-way (killed, the machine down) left in storage/backups/: the
 * uncompressed copy of the whole database and the compressed file half-written, never listed and never removed
 * otherwise. A running backup's files are spared: it writes to one of them all the time (VACUUM INTO to the
 * snapshot, then gzip to the partial file), so a pair whose newer file was written within LEFTOVER_AGE_MS is
 * still in use. Run at every start and before every backup; returns the names deleted.
 */
export function removeBackupLeftovers(storageDir: string, now = Date.now()): string[] {
  const dir = backupsDir(storageDir);
  if (!existsSync(dir)) return [];
  const byBackup = new Map<string, { names: string[]; newest: number }>();
  for (const name of readdirSync(dir)) {
    const match = LEFTOVER.exec(name);
    if (!match) continue;
    const entry = byBackup.get(match[1]!) ?? { names: [], newest: 0 };
    entry.names.push(name);
    try {
      entry.newest = Math.max(entry.newest, lstatSync(join(dir, name)).mtimeMs);
    } catch {
      continue; // gone meanwhile: its backup finished
    }
    byBackup.set(match[1]!, entry);
  }
  const removed: string[] = [];
  for (const { names, newest } of byBackup.values()) {
    if (now - newest < LEFTOVER_AGE_MS) continue;
    for (const name of names) {
      rmSync(join(dir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}

/** The backups in storage/backups/, newest first. */
export function listBackups(storageDir: string): BackupFile[] {
  const dir = backupsDir(storageDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter(isBackupName)
    .map((name) => {
      const path = join(dir, name);
      return { name, path, bytes: statSync(path).size, sha256: readChecksum(path) ?? "", createdAt: takenAt(name) };
    })
    .sort((a, b) => b.name.localeCompare(a.name));
}

/** Deletes a backup and its checksum; false when there was none by that name. */
export function deleteBackup(storageDir: string, name: string): boolean {
  if (!isBackupName(name)) return false;
  const path = join(backupsDir(storageDir), name);
  if (!existsSync(path)) return false;
  rmSync(path);
  rmSync(checksumPath(path), { force: true });
  return true;
}

/** Keeps the newest `keep` backups in storage/backups/ and deletes the rest; returns what it deleted. */
export function pruneBackups(storageDir: string, keep: number): string[] {
  const old = listBackups(storageDir).slice(keep);
  for (const b of old) deleteBackup(storageDir, b.name);
  return old.map((b) => b.name);
}

function readChecksum(file: string): string | null {
  const path = checksumPath(file);
  if (!existsSync(path)) return null;
  return readFileSync(path, "utf8").trim().split(/\s+/)[0] ?? null;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hashing(hash, { bytes: 0 }), async function* (source) {
    for await (const _ of source) {
      /* drained */
    }
  });
  return hash.digest("hex");
}

/** Refuses a backup whose checksum is missing or does not match, or whose database fails integrity_check; else unpacks it to `into`. */
async function unpackVerified(file: string, into: string): Promise<void> {
  if (!existsSync(file)) throw new BackupRefused(`${file} does not exist`);
  const expected = readChecksum(file);
  if (!expected)
    throw new BackupRefused(
      `${checksumPath(file)} is missing: without the checksum written with the backup its content cannot be trusted`,
    );
  const actual = await sha256Of(file);
  if (actual !== expected)
    throw new BackupRefused(
      `${file} is damaged: its SHA-256 is ${actual}, but ${checksumPath(file)} says ${expected}; nothing was restored`,
    );
  try {
    await pipeline(createReadStream(file), createGunzip(), createWriteStream(into, { mode: PRIVATE_FILE }));
  } catch (err) {
    throw new BackupRefused(
      `${file} does not decompress (${err instanceof Error ? err.message : String(err)}); nothing was restored`,
    );
  }
  const client = await openClient({ url: `file:${into}` });
  try {
    const result = await client.execute("PRAGMA integrity_check");
    const problems = result.rows.map((r) => String(r[0])).filter((m) => m !== "ok");
    if (problems.length)
      throw new BackupRefused(`${file} fails SQLite's integrity_check (${problems[0]}); nothing was restored`);
    await checkNetkeepSchema(client, file);
  } catch (err) {
    if (err instanceof BackupRefused) throw err;
    throw new BackupRefused(
      `${file} does not hold a readable SQLite database (${err instanceof Error ? err.message : String(err)}); nothing was restored`,
    );
  } finally {
    client.close();
  }
}

/** Each table's columns, by table name (SQLite's own tables left out). */
async function tablesOf(client: Client): Promise<Map<string, Set<string>>> {
  const { rows } = await client.execute(
    "select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\'",
  );
  const tables = new Map<string, Set<string>>();
  for (const row of rows) {
    const name = String(row.name);
    const columns = await client.execute(`select name from pragma_table_info('${name.replaceAll("'", "''")}')`);
    tables.set(name, new Set(columns.rows.map((c) => String(c.name))));
  }
  return tables;
}

/** The tables and columns a database holds after these migrations: they are run on an empty one. */
async function schemaAfter(migrations: ReturnType<typeof readMigrationFiles>): Promise<Map<string, Set<string>>> {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-schema-"));
  const client = await openClient({ url: `file:${join(dir, "schema.db")}` });
  try {
    await client.execute("PRAGMA foreign_keys = OFF");
    for (const migration of migrations) {
      for (const statement of migration.sql) if (statement.trim()) await client.execute(statement);
    }
    return await tablesOf(client);
  } finally {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Refuses a database that is not netkeep's, or not whole: it must hold drizzle's migrations table, its applied
 * migrations must be this release's (the same ones, in order: an older release's backup holds a prefix of them,
 * and the next start applies the rest), and every table and column those migrations create must be there.
 * Otherwise the next start would build an empty netkeep inside a foreign file, or refuse to start on a damaged one.
 */
async function checkNetkeepSchema(client: Client, file: string): Promise<void> {
  const notNetkeep = (why: string) =>
    new BackupRefused(`${file} is not a netkeep database: ${why}; nothing was restored`);
  let applied: { hash: string; at: number }[];
  try {
    const { rows } = await client.execute("select hash, created_at from __drizzle_migrations order by created_at, id");
    applied = rows.map((r) => ({ hash: String(r.hash), at: Number(r.created_at) }));
  } catch {
    throw notNetkeep("it has no migrations table (__drizzle_migrations)");
  }
  if (!applied.length) throw notNetkeep("its migrations table is empty");
  const known = readMigrationFiles({ migrationsFolder });
  const unknown = applied.findIndex((m, i) => known[i]?.hash !== m.hash || known[i]?.folderMillis !== m.at);
  if (unknown >= 0) {
    throw new BackupRefused(
      `${file} holds migration ${unknown + 1} (of ${new Date(applied[unknown]!.at).toISOString()}), which this release does not ship: it comes from a newer release or another application; restore it with the release that wrote it; nothing was restored`,
    );
  }
  const expected = await schemaAfter(known.slice(0, applied.length));
  const actual = await tablesOf(client);
  const missingTables = [...expected.keys()].filter((t) => !actual.has(t));
  if (missingTables.length) {
    throw new BackupRefused(
      `${file} lacks ${missingTables.length === 1 ? "table" : "tables"} ${missingTables.slice(0, 5).join(", ")} that its migrations create: the backup is damaged; nothing was restored`,
    );
  }
  const missingColumns = [...expected].flatMap(([t, columns]) =>
    [...columns].filter((c) => !actual.get(t)!.has(c)).map((c) => `${t}.${c}`),
  );
  if (missingColumns.length) {
    throw new BackupRefused(
      `${file} lacks ${missingColumns.length === 1 ? "column" : "columns"} ${missingColumns.slice(0, 5).join(", ")} that its migrations create: the backup is damaged; nothing was restored`,
    );
  }
}

/**
 * True when another connection has the database open. Leaving WAL mode needs every other connection closed,
 * and SQLite answers SQLITE_BUSY otherwise: the API, a collector or svc holds it. On success the file is left in
 * rollback-journal mode with its WAL folded in, which is what keeping it as the replaced copy needs.
 */
async function inUse(path: string): Promise<boolean> {
  const client = await openClient({ url: `file:${path}`, timeout: 0 });
  try {
    const result = await client.execute("PRAGMA journal_mode = DELETE");
    return String(result.rows[0]?.[0]).toLowerCase() !== "delete";
  } catch (err) {
    if (err instanceof Error && /SQLITE_BUSY|locked/i.test(err.message)) return true;
    throw err;
  } finally {
    client.close();
  }
}

export type Restored = { target: string; replaced: string | null };

/**
 * Replaces the database with a verified backup. Refused while any process has the target open; the replaced
 * file is kept beside it as `<file>.replaced-<time>`.
 */
export async function restoreBackup(options: { file: string; databaseUrl: string; now: Date }): Promise<Restored> {
  const target = databaseFile(options.databaseUrl);
  if (!target) throw new BackupRefused(REMOTE_DATABASE_ADVICE.replace("back it up", "restore it"));
  const unpacked = join(dirname(target), `.${basename(target)}.restoring`);
  mkdirSync(dirname(target), { recursive: true });
  rmSync(unpacked, { force: true });
  try {
    await unpackVerified(options.file, unpacked);
    let replaced: string | null = null;
    if (existsSync(target)) {
      if (await inUse(target)) {
        throw new BackupRefused(
          `${target} is open in another process (the API, a collector or svc): stop the service on it first; nothing was restored`,
        );
      }
      replaced = `${target}.replaced-${options.now.toISOString().replace(/[-:.]/g, "")}`;
      renameSync(target, replaced);
      for (const side of ["-wal", "-shm"]) rmSync(target + side, { force: true });
    }
    renameSync(unpacked, target);
    return { target, replaced };
  } finally {
    rmSync(unpacked, { force: true });
  }
}

/** The backup of that name in storage/backups/, or null. */
export function findBackup(storageDir: string, name: string): BackupFile | null {
  return isBackupName(name) ? (listBackups(storageDir).find((b) => b.name === name) ?? null) : null;
}

/** A backup's bytes as a web stream, for a download. */
export function backupStream(file: BackupFile): ReadableStream<Uint8Array> {
  return Readable.toWeb(createReadStream(file.path)) as ReadableStream<Uint8Array>;
}
