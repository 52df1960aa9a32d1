import { asc, eq, getTableName, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Logger } from "../kernel/logger.ts";
import type { DbOrTx } from "./client.ts";
import { nameKey } from "./name-key.ts";
import {
  categories,
  credentials,
  deviceProfiles,
  devices,
  roles,
  tags,
  tasks,
  templates,
  users,
  vendors,
} from "./schema/index.ts";

/** Every stored name key and the column it folds. */
const KEYED: { table: SQLiteTable; id: SQLiteColumn; name: SQLiteColumn; key: SQLiteColumn }[] = [
  { table: roles, id: roles.id, name: roles.name, key: roles.nameKey },
  { table: users, id: users.id, name: users.username, key: users.usernameKey },
  { table: users, id: users.id, name: users.email, key: users.emailKey },
  { table: vendors, id: vendors.id, name: vendors.name, key: vendors.nameKey },
  { table: tags, id: tags.id, name: tags.name, key: tags.nameKey },
  { table: categories, id: categories.id, name: categories.name, key: categories.nameKey },
  { table: templates, id: templates.id, name: templates.name, key: templates.nameKey },
  { table: credentials, id: credentials.id, name: credentials.name, key: credentials.nameKey },
  { table: deviceProfiles, id: deviceProfiles.id, name: deviceProfiles.name, key: deviceProfiles.nameKey },
  { table: devices, id: devices.id, name: devices.name, key: devices.nameKey },
  { table: tasks, id: tasks.id, name: tasks.name, key: tasks.nameKey },
];

/**
 * Computes the keys migration 0008 left as placeholders (char(1) and the row's id: SQLite cannot fold Unicode).
 * Rows that folded apart under the old ASCII-only rule may clash under the new one ("Çdup" and "çdup"): the
 * earlier row keeps the key, the later one's key gets its id appended after a control character (which no name
 * may contain, so no later name can fold to it), and a warning names both so someone can rename one. No row is
 * lost and the upgrade does not fail. Runs inside the seed's transaction on every start; a database with no
 * placeholders costs one indexed lookup per column.
 */
export async function backfillNameKeys(tx: DbOrTx, logger: Logger): Promise<void> {
  for (const { table, id, name, key } of KEYED) {
    const pending = (await tx
      .select({ id, name })
      .from(table)
      .where(sql`substr(${key}, 1, 1) = char(1)`)
      .orderBy(asc(id))) as { id: number; name: string }[];
    for (const row of pending) {
      const folded = nameKey(row.name);
      const [holder] = (await tx.select({ id, name }).from(table).where(eq(key, folded)).limit(1)) as {
        id: number;
        name: string;
      }[];
      const value = holder ? `${folded}\u0001${row.id}` : folded;
      if (holder) {
        logger.warn("two names are the same under Unicode case folding; both rows are kept, rename one of them", {
          table: getTableName(table),
          column: name.name,
          first: { id: holder.id, name: holder.name },
          later: { id: row.id, name: row.name },
        });
      }
      await tx
        .update(table)
        .set({ [keyProperty(table, key)]: value })
        .where(eq(id, row.id));
    }
  }
}

/** The schema property name of a column (drizzle's set() takes property names, not SQL names). */
function keyProperty(table: SQLiteTable, column: SQLiteColumn): string {
  const entry = Object.entries(table).find(([, c]) => c === column);
  if (!entry) throw new Error(`column ${column.name} is not in its table`);
  return entry[0];
}
