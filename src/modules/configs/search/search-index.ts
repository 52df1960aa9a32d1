/**
 * Keeps the configuration search index (config_search_docs + the FTS5 table config_search, whose tokens
 * search-grams.ts describes) in step with stored versions. Each new version adds one document: the whole text for the first version of a series, then only the
 * lines that version added. So every line of every stored version is in some document of its series, and the
 * index costs about one version per series however long the history. A rebuild (search-reindex.ts) writes each
 * series as one document (indexSeries).
 *
 * Storing a version queues it (config_search_pending); indexPendingVersions writes the documents later, many in
 * one transaction. A 100 KB configuration's document took 7 ms to build and 8 ms to insert on its own, against
 * 5 ms inserted in batches of 50: more than everything else its download cost the collector.
 */
import { asc, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { configs, configSearchDocs, configSearchPending } from "../../../db/schema/index.ts";
import { readBlobs } from "../storage/blobs.ts";
import type { CommonGrams } from "./common-grams-type.ts";
import { commonGrams } from "./search-common-grams.ts";
import { gramDocument } from "./search-grams.ts";

/** The lines of a text that `previous` lacks. */
function newLines(text: string, previous: string): string[] {
  const old = new Set(previous ? previous.split("\n") : []);
  return text.split("\n").filter((line) => line !== "" && !old.has(line));
}

type Doc = { deviceId: number; command: string; configId: number; body: string };

/**
 * Writes documents: their rows first, then their bodies in one statement. FTS5 keeps the terms of rows inserted
 * in memory and writes them out when the transaction, or any next statement in it, begins: inserting the rows
 * and the bodies in turn wrote out each body on its own, at 2 ms for a 100 KB configuration (bench:collect).
 */
async function insertDocs(tx: DbOrTx, docs: readonly Doc[]): Promise<void> {
  if (!docs.length) return;
  const rows = await tx
    .insert(configSearchDocs)
    .values(docs.map((d) => ({ deviceId: d.deviceId, command: d.command, configId: d.configId })))
    .returning({ id: configSearchDocs.id });
  // Ids are handed out in the order of the values; RETURNING promises no order.
  const ids = rows.map((r) => r.id).sort((a, b) => a - b);
  const bodies = ids.map((id, i) => ({ id, body: docs[i]!.body })).filter((d) => d.body);
  if (bodies.length)
    await tx.run(
      sql`insert into config_search (rowid, body) values ${sql.join(
        bodies.map((d) => sql`(${d.id}, ${d.body})`),
        sql`, `,
      )}`,
    );
}

const docOf = (
  input: { deviceId: number; command: string; configId: number; text: string; previous: string },
  common: CommonGrams,
): Doc => ({ ...input, body: gramDocument(newLines(input.text, input.previous), common) });

/**
 * Indexes a version now. `previous` is the text of the version it follows ("" for the first of its series).
 * A queued entry for it goes, so it is not indexed twice.
 */
export async function indexConfigText(
  tx: DbOrTx,
  input: { deviceId: number; command: string; configId: number; text: string; previous: string },
): Promise<void> {
  await tx.delete(configSearchPending).where(eq(configSearchPending.configId, input.configId));
  await insertDocs(tx, [docOf(input, await commonGrams(tx))]);
}

/**
 * Indexes a whole series as one document: every distinct line of `lines` (its versions' texts), named after its
 * newest version, `configIds` being every version it covers (their queued entries go). One document holds a
 * token once where a document per version held it again in each version that added a line with it.
 */
export async function indexSeries(
  tx: DbOrTx,
  input: { deviceId: number; command: string; configIds: readonly number[]; lines: Iterable<string> },
): Promise<void> {
  if (!input.configIds.length) return;
  // The ids as one JSON array: a long history has more versions than SQLite takes bound parameters.
  await tx.run(
    sql`delete from ${configSearchPending} where config_id in (select value from json_each(${JSON.stringify(input.configIds)}))`,
  );
  const body = gramDocument(input.lines, await commonGrams(tx));
  await insertDocs(tx, [
    {
      deviceId: input.deviceId,
      command: input.command,
      configId: input.configIds.reduce((a, b) => Math.max(a, b)),
      body,
    },
  ]);
}

/** Queues versions just stored for indexing; call it in the transaction that stores them. */
export async function queueForIndex(
  tx: DbOrTx,
  versions: readonly { deviceId: number; command: string; configId: number }[],
): Promise<void> {
  if (!versions.length) return;
  // As SQL, not with drizzle's builder: it runs for every stored download (see storeConfigs).
  await tx.run(sql`insert into ${configSearchPending} (device_id, command, config_id)
    values ${sql.join(
      versions.map((v) => sql`(${v.deviceId}, ${v.command}, ${v.configId})`),
      sql`, `,
    )}`);
}

/**
 * Indexes up to `limit` queued versions, oldest first, so a version is indexed after the one it follows (its
 * document is the lines that one lacks). Documents are built before the write transaction, which then takes
 * only the entries still queued: one another collector indexed meanwhile, or whose version was deleted or
 * indexed by a purge (search-reindex.ts), is left alone. Returns how many versions it took from the queue, and
 * which of them it took without a document because their stored text cannot be read (a broken delta chain): left
 * in the queue, they would stop it for good, and search cannot show such a version's text either.
 */
export async function indexPendingVersions(db: Db, limit: number): Promise<{ taken: number; unreadable: number[] }> {
  const pending = await db
    .select({
      configId: configSearchPending.configId,
      deviceId: configSearchPending.deviceId,
      command: configSearchPending.command,
      blobHash: configs.blobHash,
      previousHash: sql<
        string | null
      >`(select p.blob_hash from ${configs} p where p.device_id = ${configs.deviceId} and p.command = ${configs.command} and p.version < ${configs.version} order by p.version desc limit 1)`,
    })
    .from(configSearchPending)
    .innerJoin(configs, eq(configs.id, configSearchPending.configId))
    .orderBy(asc(configSearchPending.configId))
    .limit(limit);
  if (!pending.length) return { taken: 0, unreadable: [] };
  const texts = await readTexts(db, [
    ...new Set(pending.flatMap((p) => (p.previousHash ? [p.blobHash, p.previousHash] : [p.blobHash]))),
  ]);
  const common = await commonGrams(db);
  const docs = new Map<number, Doc>();
  for (const p of pending) {
    const text = texts.get(p.blobHash);
    // Missing: deleted since it was read (its entry went with it), or unreadable.
    if (text === undefined) continue;
    // A previous text that cannot be read: the whole text then, which holds every line the shorter one would.
    docs.set(p.configId, docOf({ ...p, text, previous: (p.previousHash && texts.get(p.previousHash)) || "" }, common));
  }
  return db.transaction(async (tx) => {
    const taken = await tx
      .delete(configSearchPending)
      .where(
        inArray(
          configSearchPending.configId,
          pending.map((p) => p.configId),
        ),
      )
      .returning({ configId: configSearchPending.configId });
    const ids = taken.map((t) => t.configId).sort((a, b) => a - b);
    await insertDocs(
      tx,
      ids.flatMap((id) => docs.get(id) ?? []),
    );
    return { taken: ids.length, unreadable: ids.filter((id) => !docs.has(id)) };
  });
}

/** The texts of these blobs; one that cannot be rebuilt is left out rather than failing the others. */
async function readTexts(db: Db, hashes: string[]): Promise<Map<string, string>> {
  try {
    return await readBlobs(db, hashes);
  } catch {
    const texts = new Map<string, string>();
    for (const hash of hashes) {
      const text = await readBlobs(db, [hash]).then(
        (t) => t.get(hash),
        () => undefined,
      );
      if (text !== undefined) texts.set(hash, text);
    }
    return texts;
  }
}

/** Indexes everything queued, as maintenance does before it looks at the index. */
export async function indexAllPending(db: Db): Promise<void> {
  while ((await indexPendingVersions(db, 50)).taken);
}
