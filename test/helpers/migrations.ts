import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations } from "../../src/db/migrate.ts";

/** A copy of drizzle/ holding only the migrations up to `last`: what an older release would apply. */
export function migrationsUpTo(last: string): string {
  const folder = mkdtempSync(join(tmpdir(), "netkeep-old-migrations-"));
  cpSync(new URL("../../drizzle", import.meta.url).pathname, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: { idx: number; tag: string }[] };
  const end = journal.entries.findIndex((e) => e.tag === last);
  if (end < 0) throw new Error(`no migration ${last}`);
  for (const e of journal.entries.slice(end + 1)) rmSync(join(folder, `${e.tag}.sql`));
  journal.entries = journal.entries.slice(0, end + 1);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

/** A new database in a temp folder, migrated only as far as an older release (`last`) left it. */
export async function databaseAtRelease(last: string): Promise<{ dir: string; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-test-"));
  const url = `file:${join(dir, "netkeep.db")}`;
  const old = migrationsUpTo(last);
  try {
    await applyMigrations({ url }, old);
  } finally {
    rmSync(old, { recursive: true, force: true });
  }
  return { dir, url };
}
