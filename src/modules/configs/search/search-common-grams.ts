/**
 * Common tokens of the configuration search index. Configurations are written from templates, so most of the
 * index would say, token by token, what most configurations hold ("logging host ", "snmp-server ...").
 * Such a token tells no configuration apart, yet costs a byte per document. Maintenance (maintenance.ts)
 * names the tokens at least half the series hold; documents leave them out from then on and lookups never ask for
 * them (search-grams.ts), so the index keeps only what narrows a search.
 *
 * Soundness rests on the list only ever growing: a document written with a list lacks exactly its tokens, and a
 * lookup made with any later list (a superset) asks for none of them. A writer may use a list older than the
 * stored one (its documents just hold a few more tokens); a lookup must use one at least as new as every
 * writer's, so searches read the list's length before and after they look up (search.ts).
 */
import { eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { configSearchCommonGrams } from "../../../db/schema/index.ts";
import type { CommonGrams } from "./common-grams-type.ts";
import { GRAM } from "./search-grams.ts";
import { MIN_LITERAL } from "./search-literals.ts";

export const NO_COMMON_GRAMS: CommonGrams = { key: "", count: 0, grams: new Set(), prefixes: new Set() };

/** The lists read so far, by database key: reading a version again costs one small query. */
const loaded = new Map<string, CommonGrams>();

const ROW = 1;

/** The list's key and length, without the list. */
export async function commonGramsVersion(db: DbOrTx): Promise<{ key: string; count: number }> {
  const [row] = await db
    .select({ key: configSearchCommonGrams.key, count: configSearchCommonGrams.count })
    .from(configSearchCommonGrams)
    .where(eq(configSearchCommonGrams.id, ROW));
  return row ? { key: row.key, count: row.count } : { key: "", count: 0 };
}

/** The current list of common tokens. */
export async function commonGrams(db: DbOrTx): Promise<CommonGrams> {
  const version = await commonGramsVersion(db);
  if (version.count === 0) return NO_COMMON_GRAMS;
  const known = loaded.get(version.key);
  if (known && known.count === version.count) return known;
  const [row] = await db.select().from(configSearchCommonGrams).where(eq(configSearchCommonGrams.id, ROW));
  const prefixes = new Set<string>();
  for (const gram of row!.grams) for (let n = MIN_LITERAL; n < GRAM; n++) prefixes.add(gram.slice(0, n));
  const list = { key: row!.key, count: row!.count, grams: new Set(row!.grams), prefixes };
  loaded.set(list.key, list);
  return list;
}

/** Adds tokens to the list (never removes one) and says how many were new. */
export async function addCommonGrams(db: Db, grams: readonly string[]): Promise<number> {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(configSearchCommonGrams).where(eq(configSearchCommonGrams.id, ROW));
    const known = new Set(row?.grams ?? []);
    const added = [...new Set(grams)].filter((g) => !known.has(g));
    if (!added.length) return 0;
    const all = [...known, ...added];
    if (row)
      await tx
        .update(configSearchCommonGrams)
        .set({ count: all.length, grams: all })
        .where(eq(configSearchCommonGrams.id, ROW));
    else
      await tx
        .insert(configSearchCommonGrams)
        .values({ id: ROW, key: crypto.randomUUID(), count: all.length, grams: all });
    return added.length;
  });
}
