import { is, sql } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "../../db/client.ts";
import * as schema from "../../db/schema/index.ts";
import type { SecretBox } from "./box.ts";

/**
 * Every column that holds ciphertext under the app key. The naming rule (`*_enc`) is the registry: a new
 * encrypted column is found here, and so rotated, by being named like the others.
 */
export type EncryptedColumn = { table: string; column: string };

export function encryptedColumns(): EncryptedColumn[] {
  const found: EncryptedColumn[] = [];
  for (const value of Object.values(schema)) {
    if (!is(value, SQLiteTable)) continue;
    const { name, columns } = getTableConfig(value);
    for (const c of columns) if (c.name.endsWith("_enc")) found.push({ table: name, column: c.name });
  }
  return found.sort((a, b) => a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
}

const byTable = () => {
  const tables = new Map<string, string[]>();
  for (const { table, column } of encryptedColumns())
    (tables.get(table) ?? tables.set(table, []).get(table)!).push(column);
  return tables;
};

/** One stored secret, in clear, and where it goes back to. */
type Plain = { table: string; column: string; rowid: number; text: string };

export class UndecryptableSecretError extends Error {}

/**
 * Reads and decrypts every stored secret. Fails on the first that does not decrypt, naming where it is
 * (never what it is), so a rotation starts only when the current key opens everything.
 */
export async function decryptAll(db: DbOrTx, box: SecretBox): Promise<Plain[]> {
  const plain: Plain[] = [];
  for (const [table, columns] of byTable()) {
    const anySet = sql.join(
      columns.map((c) => sql`${sql.identifier(c)} is not null`),
      sql` or `,
    );
    const rows = await db.all<Record<string, string | number | null>>(
      sql`select rowid as "rowid", ${sql.join(
        columns.map((c) => sql.identifier(c)),
        sql`, `,
      )} from ${sql.identifier(table)} where ${anySet}`,
    );
    for (const row of rows) {
      for (const column of columns) {
        const sealed = row[column];
        if (sealed === null || sealed === undefined) continue;
        try {
          plain.push({ table, column, rowid: Number(row.rowid), text: await box.decrypt(String(sealed)) });
        } catch {
          throw new UndecryptableSecretError(
            `${table}.${column} of row ${row.rowid} does not decrypt with the current app key`,
          );
        }
      }
    }
  }
  return plain;
}

/** Seals every secret under `box`, in the caller's transaction. Returns how many per table. */
export async function encryptAll(tx: DbOrTx, plain: Plain[], box: SecretBox): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const p of plain) {
    await tx.run(
      sql`update ${sql.identifier(p.table)} set ${sql.identifier(p.column)} = ${await box.encrypt(p.text)} where rowid = ${p.rowid}`,
    );
    counts.set(p.table, (counts.get(p.table) ?? 0) + 1);
  }
  return counts;
}

/**
 * Which of some keys the stored secrets are sealed with, judged by the first one found: a rotation rewrites
 * them all in one transaction, so they are all under the same key. `null` when nothing is stored.
 */
export async function keyInUse(db: DbOrTx, boxes: SecretBox[]): Promise<number | "none" | null> {
  for (const [table, columns] of byTable()) {
    // Start-up may run this before migrating: skip what the database does not have yet.
    const present = new Set(
      (await db.all<{ name: string }>(sql`select name from pragma_table_info(${table})`)).map((r) => r.name),
    );
    for (const column of columns.filter((c) => present.has(c))) {
      const [row] = await db.all<{ sealed: string }>(
        sql`select ${sql.identifier(column)} as sealed from ${sql.identifier(table)} where ${sql.identifier(column)} is not null limit 1`,
      );
      if (!row) continue;
      for (const [i, box] of boxes.entries()) {
        if (
          await box.decrypt(row.sealed).then(
            () => true,
            () => false,
          )
        )
          return i;
      }
      return "none";
    }
  }
  return null;
}
