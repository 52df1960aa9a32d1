/**
 * Storage maintenance, as `git gc` is for a repository: the system-wide purge (the nightly retention task and
 * `svc configs:purge`) runs it after purging, and `svc configs:reindex` with a full rebuild. Each step is safe
 * while collectors store and searches run:
 * 0. Versions still queued for the index are indexed (a collector does it in its spare time; this makes sure).
 * 1. Tokens half the series or more hold in their index documents become common (search-common-grams.ts); when the list
 *    grows, every series' documents are rebuilt without them, one series per transaction.
 * 2. The index's segments are merged into one (FTS5 'optimize'), which also drops what deletions left behind.
 * 3. Texts as downloads stored them are recompressed with their command's dictionary (blob-recompress.ts).
 * 4. Free pages go back to the file system: incrementally on a database created with auto_vacuum = INCREMENTAL
 *    (every database migrations create); an older one is vacuumed once into that mode when a quarter of it is free.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client.ts";
import { configSearchDocs } from "../../../db/schema/index.ts";
import { recompressConfigTexts, type RecompressReport } from "./blob-recompress.ts";
import type { MaintenanceProgress } from "./maintenance-progress.ts";
import { addCommonGrams, commonGrams } from "../search/search-common-grams.ts";
import { reindexAllConfigs } from "../search/search-reindex.ts";
import { indexAllPending } from "../search/search-index.ts";

/** Below this many series there is too little to tell common tokens by, and too little index to matter. */
export const MIN_SERIES = 100;
/**
 * A token is common when at least this share of the series hold it. A token in half the series can halve a
 * search's candidates at best, and the overlapping windows of one literal mostly come and go together, so such
 * tokens narrow little; they held about a fifth of the index's entries (bench:configs: 8.2 -> 7.2 MB).
 */
export const COMMON_SHARE = 0.5;

export type MaintenanceReport = {
  commonGramsAdded: number;
  seriesReindexed: number;
  versionsReindexed: number;
  pagesFreed: number;
} & RecompressReport;

/**
 * Adds the tokens at least COMMON_SHARE of the series hold to the common list; says how many were new. FTS5
 * counts documents, and a series has one per version that added lines: a token in every edit of a few long
 * histories (a change ticket's prefix) can be in as many documents as a template's. So the vocabulary's count
 * only picks the candidates, and each is counted again by series.
 */
export async function learnCommonGrams(db: Db): Promise<number> {
  const [{ series } = { series: 0 }] = await db.all<{ series: number }>(
    sql`select count(*) as series from (select distinct ${configSearchDocs.deviceId}, ${configSearchDocs.command} from ${configSearchDocs})`,
  );
  if (Number(series) < MIN_SERIES) return 0;
  const needed = Math.ceil(COMMON_SHARE * Number(series));
  const known = (await commonGrams(db)).grams;
  // The vocabulary table lives on one connection: create, read and drop it within one transaction.
  const candidates = await db.transaction(async (tx) => {
    await tx.run(
      sql`create virtual table if not exists temp.config_search_vocab using fts5vocab(main, config_search, row)`,
    );
    const rows = await tx.all<{ term: string }>(sql`select term from temp.config_search_vocab where doc >= ${needed}`);
    await tx.run(sql`drop table temp.config_search_vocab`);
    return rows.map((r) => r.term).filter((term) => !known.has(term));
  });
  const grams: string[] = [];
  for (const term of candidates) {
    const [row] = await db.all<{
      n: number;
    }>(sql`select count(*) as n from (select distinct device_id, command from ${configSearchDocs}
      where id in (select rowid from config_search where config_search match ${`"${term}"`}))`);
    if (Number(row!.n) >= needed) grams.push(term);
  }
  return addCommonGrams(db, grams);
}

/**
 * Hands free pages back to the file system; says how many. Through executeMultiple: libSQL's execute steps an
 * incremental_vacuum once (one page) and leaves it in progress, and the pragma that converts an older database
 * must run on the connection that vacuums.
 */
async function releaseFreePages(db: Db): Promise<number> {
  const pragma = async (name: string) =>
    Number(Object.values((await db.all<Record<string, number>>(sql.raw(`pragma ${name}`)))[0] ?? {})[0] ?? 0);
  const free = await pragma("freelist_count");
  if (!free) return 0;
  if ((await pragma("auto_vacuum")) === 2) await db.$client.executeMultiple("pragma incremental_vacuum;");
  else if (free * 4 >= (await pragma("page_count")))
    await db.$client.executeMultiple("pragma auto_vacuum = incremental; vacuum;");
  else return 0;
  return free - (await pragma("freelist_count"));
}

export async function maintainConfigStorage(
  db: Db,
  options: { reindex?: boolean; now?: Date; progress?: MaintenanceProgress } = {},
): Promise<MaintenanceReport> {
  await indexAllPending(db);
  const commonGramsAdded = await learnCommonGrams(db);
  const rebuilt =
    commonGramsAdded || options.reindex ? await reindexAllConfigs(db, options.progress) : { series: 0, versions: 0 };
  await db.run(sql`insert into config_search (config_search) values ('optimize')`);
  const recompressed = await recompressConfigTexts(db, options.now ?? new Date(), options.progress);
  return {
    commonGramsAdded,
    seriesReindexed: rebuilt.series,
    versionsReindexed: rebuilt.versions,
    ...recompressed,
    pagesFreed: await releaseFreePages(db),
  };
}
