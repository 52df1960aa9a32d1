import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client.ts";

/**
 * Caps the database at its size now (PRAGMA max_page_count, on the connection every write goes through) and
 * fills its free pages, so the next write that needs a new page fails with SQLITE_FULL, as on a full disk.
 */
export async function fillDatabase(db: Db): Promise<void> {
  await db.run(sql`create table filler (b blob)`);
  const [pages] = (await db.all(sql`pragma page_count`)) as { page_count: number }[];
  await db.all(sql.raw(`pragma max_page_count = ${pages!.page_count + 8}`));
  for (let i = 0; i < 1000; i++) {
    try {
      await db.run(sql`insert into filler values (randomblob(3000))`);
    } catch (err) {
      const code = String((err as { cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code);
      if (!code.startsWith("SQLITE_FULL")) throw err;
      return;
    }
  }
  throw new Error("the database never filled");
}
