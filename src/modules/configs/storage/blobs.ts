/**
 * Stored configuration texts (config_blobs), one row per distinct text. The latest version of a series is whole;
 * when a newer one arrives, the one before it becomes a reverse delta against it (a line edit script,
 * blob-delta.ts), so an old version costs about what changed. Reading one follows its chain of bases to a whole
 * text and applies the deltas back. Downloads write gzip; maintenance recompresses (blob-codec.ts).
 *
 * Invariants, which every writer here keeps:
 * - A blob becomes a delta only against a whole blob or one of its own current ancestors, so chains never loop.
 * - No chain is longer than MAX_CHAIN: a version that would lengthen one past it stays whole.
 * - A base is never deleted while a delta needs it (deleteBlobs re-encodes the dependents first; the base_id
 *   foreign key makes any other delete fail instead of losing texts).
 *
 * A delta names its base by the base's id (base_id, given when it first becomes a base); deltas stored before ids
 * name it by hash (base_hash) until maintenance moves them over (blob-recompress.ts): readers take either.
 */
import { eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { configBlobs, configDictionaries } from "../../../db/schema/index.ts";
import { decodeContent, isDelta, isWhole, loadDictionaries } from "./blob-codec.ts";
import { decodeLineDelta, encodeLineDelta } from "./blob-delta.ts";
import { applyLineDelta, RunText } from "./line-runs.ts";
import { gzipText } from "./text.ts";

/** Deltas one read may apply at most. */
export const MAX_CHAIN = 20;
/** Ids per statement: well under SQLite's limit on bound parameters. */
const CHUNK = 500;

// drizzle types blob columns as Buffer; libSQL takes any Uint8Array, so no Node Buffer is needed here.
const asContent = (bytes: Uint8Array) => bytes as unknown as Buffer;

/** The hash of the blob `alias` is a delta against (null: whole), given `base` joined on its base_id. */
const baseOf = (alias: string, base: string) => sql.raw(`coalesce(${base}.hash, ${alias}.base_hash)`);

/** The hash of the blob this one is a delta against; null when it is whole. */
export async function blobBase(db: DbOrTx, hash: string): Promise<string | null> {
  const [row] = await db.all<{ base: string | null }>(sql`
    select ${baseOf("b", "p")} as base from ${configBlobs} b left join ${configBlobs} p on p.id = b.base_id where b.hash = ${hash}`);
  if (!row) throw new Error(`config blob ${hash} is missing`);
  return row.base;
}

/** The id of this blob, given now if it has none (it is about to become a base). */
export async function baseIdOf(tx: DbOrTx, hash: string): Promise<number> {
  await tx.run(
    sql`update ${configBlobs} set id = (select coalesce(max(id), 0) + 1 from ${configBlobs}) where hash = ${hash} and id is null`,
  );
  const [row] = await tx.select({ id: configBlobs.id }).from(configBlobs).where(eq(configBlobs.hash, hash));
  if (row?.id == null) throw new Error(`config blob ${hash} is missing`);
  return row.id;
}

/** `dictionary`: the hash of its content's preset dictionary (blob-codec.ts). */
type StoredBlob = {
  hash: string;
  encoding: string;
  baseHash: string | null;
  dictionary: string | null;
  content: Uint8Array;
  size: number;
};

/**
 * The rows of these blobs and of every blob their deltas rebuild from, down to a whole text or one in `have`.
 * One statement, so a purge re-encoding a chain meanwhile cannot hand back half of an old one; hashes travel as
 * JSON arrays, so any number fits in one statement. (Written as a subquery: a statement starting with WITH
 * would count as a write in write-turns.ts.)
 */
async function blobChains(
  db: DbOrTx,
  hashes: readonly string[],
  have: ReadonlySet<string>,
): Promise<Map<string, StoredBlob>> {
  const wanting = hashes.filter((h) => !have.has(h));
  if (!wanting.length) return new Map();
  const wanted = JSON.stringify(wanting);
  const stop = JSON.stringify([...have]);
  // Two columns a row: libSQL's cost per row grows with its columns, and a search reads hundreds of rows.
  const rows = await db.all<{ meta: string; content: ArrayBuffer | Uint8Array }>(sql`
    select * from (
      with recursive need(hash) as (
        select value from json_each(${wanted})
        union
        select ${baseOf("b", "p")} from ${configBlobs} b join need on b.hash = need.hash left join ${configBlobs} p on p.id = b.base_id
        where ${baseOf("b", "p")} is not null and ${baseOf("b", "p")} not in (select value from json_each(${stop}))
      )
      select b.hash || ' ' || b.encoding || ' ' || b.size || ' ' || coalesce(${baseOf("b", "p")}, '') || ' ' || coalesce(d.hash, '') as meta, b.content
      from ${configBlobs} b join need on b.hash = need.hash left join ${configBlobs} p on p.id = b.base_id
      left join ${configDictionaries} d on d.id = b.dictionary_id
    )`);
  const blobs = new Map<string, StoredBlob>();
  for (const { meta, content } of rows) {
    const [hash, encoding, size, baseHash, dictionary] = meta.split(" ") as [string, string, string, string, string];
    blobs.set(hash, {
      hash,
      encoding,
      baseHash: baseHash || null,
      dictionary: dictionary || null,
      content: new Uint8Array(content),
      size: Number(size),
    });
  }
  await loadDictionaries(
    db,
    [...blobs.values()].flatMap((b) => (b.dictionary ? [b.dictionary] : [])),
  );
  return blobs;
}

/**
 * Each hash's text rebuilt through its chain of deltas, each chain once however many of the hashes share it, as
 * `whole` makes a stored text and `apply` applies a delta script to its base. `known` holds texts the caller
 * already has (by hash, so never stale): chains stop there. A hash that is not stored is absent from the answer
 * (its version was deleted); a chain that does not lead to a text throws.
 */
async function resolveChains<T>(
  db: DbOrTx,
  hashes: readonly string[],
  known: ReadonlyMap<string, T>,
  whole: (text: string) => T,
  apply: (script: string, base: T, row: StoredBlob) => T,
): Promise<Map<string, T>> {
  const rows = await blobChains(db, hashes, new Set(known.keys()));
  const texts = new Map<string, T>();
  const textOf = async (hash: string): Promise<T | undefined> => {
    // The chain from `hash` down to a text at hand, then its deltas applied back up.
    const path: StoredBlob[] = [];
    let text: T | undefined;
    for (let at: string | null = hash; text === undefined; ) {
      text = texts.get(at) ?? known.get(at);
      if (text !== undefined) break;
      const row = rows.get(at);
      if (!row) {
        if (at === hash) return undefined;
        throw new Error(`config blob ${hash} has a broken delta chain: ${at} is missing`);
      }
      if (isWhole(row.encoding)) text = whole(await decodeContent(row));
      else if (!isDelta(row.encoding) || !row.baseHash || path.length >= MAX_CHAIN * 2)
        throw new Error(`config blob ${hash} has a broken delta chain`);
      else {
        path.push(row);
        at = row.baseHash;
        continue;
      }
      texts.set(at, text);
    }
    for (let i = path.length - 1; i >= 0; i--) {
      text = apply(await decodeContent(path[i]!), text, path[i]!);
      texts.set(path[i]!.hash, text);
    }
    return text;
  };
  const out = new Map<string, T>();
  for (const hash of new Set(hashes)) {
    const text = await textOf(hash);
    if (text !== undefined) out.set(hash, text);
  }
  return out;
}

/**
 * gzip and zlib check each part, not that the parts belong together: a rebuilt text must have its stored size (UTF-8
 * bytes, as storeConfig measures it). Its length in UTF-16 units equals that for ASCII text, which spares most
 * texts the encoding.
 */
function checkSize(row: StoredBlob, length: number, text: () => string) {
  if (length !== row.size && new TextEncoder().encode(text()).length !== row.size)
    throw new Error(`config blob ${row.hash} is corrupt: it rebuilds to the wrong size`);
}

/**
 * The texts of stored blobs (see resolveChains). (Deltas are checked when written, each part is gzip with its
 * own checksum (zlib's too) and a rebuilt text must have its stored size; reads do not hash the texts again: that would cost
 * more than the rebuild.)
 */
export function readBlobs(
  db: DbOrTx,
  hashes: readonly string[],
  known: ReadonlyMap<string, string> = new Map(),
): Promise<Map<string, string>> {
  return resolveChains(
    db,
    hashes,
    known,
    (text) => text,
    (script, base, row) => {
      const text = decodeLineDelta(script, base);
      checkSize(row, text.length, () => text);
      return text;
    },
  );
}

/** The same as runs of lines (line-runs.ts): a version rebuilt from a delta copies no characters until asked. */
export function readBlobRuns(
  db: DbOrTx,
  hashes: readonly string[],
  known: ReadonlyMap<string, RunText> = new Map(),
): Promise<Map<string, RunText>> {
  return resolveChains(
    db,
    hashes,
    known,
    (text) => RunText.of(text),
    (script, base, row) => {
      const { text } = applyLineDelta(script, base);
      checkSize(row, text.length, () => text.toString());
      return text;
    },
  );
}

/** The text of one stored blob, rebuilt through its deltas. */
export async function readBlob(db: DbOrTx, hash: string): Promise<string> {
  const text = (await readBlobs(db, [hash])).get(hash);
  if (text === undefined) throw new Error(`config blob ${hash} is missing`);
  return text;
}

/**
 * Stores new texts whole, or makes existing ones whole: the latest version's text is whole and may be a base.
 * One statement: a text already stored whole (in either encoding) is left as it is, a delta is replaced. Texts
 * not in `compressed` are compressed here.
 */
export async function putWholeBlobs(
  tx: DbOrTx,
  blobs: readonly { hash: string; text: string; size: number }[],
  now: Date,
  compressed: ReadonlyMap<string, Uint8Array> = new Map(),
): Promise<void> {
  const writing = [...new Map(blobs.map((b) => [b.hash, b])).values()];
  if (!writing.length) return;
  const contents = await Promise.all(
    writing.map(async (b) => asContent(compressed.get(b.hash) ?? (await gzipText(b.text)))),
  );
  // Written as SQL, not with drizzle's builder: it runs for every stored download (see storeConfigs).
  await tx.run(sql`insert into ${configBlobs} (hash, encoding, content, size, created_at)
    values ${sql.join(
      writing.map((b, i) => sql`(${b.hash}, 'gzip', ${contents[i]!}, ${b.size}, ${now.getTime()})`),
      sql`, `,
    )}
    on conflict (hash) do update set encoding = 'gzip', base_id = null, base_hash = null, dictionary_id = null, content = excluded.content
    where ${configBlobs.baseId} is not null or ${configBlobs.baseHash} is not null`);
}

/** `text` as a gzipped delta against `base`, when that rebuilds it exactly in fewer than `limit` bytes. */
async function deltaOf(text: string, base: string, limit: number): Promise<Uint8Array | null> {
  const script = encodeLineDelta(text, base);
  const delta = await gzipText(script);
  return delta.length < limit && decodeLineDelta(script, base) === text ? delta : null;
}

async function setDelta(tx: DbOrTx, hash: string, baseHash: string, delta: Uint8Array) {
  const baseId = await baseIdOf(tx, baseHash);
  await tx
    .update(configBlobs)
    .set({ encoding: "delta", baseId, baseHash: null, dictionaryId: null, content: asContent(delta) })
    .where(eq(configBlobs.hash, hash));
}

/** The longest chain of deltas that leads to this blob (0: nothing is a delta against it), by id or by hash. */
async function dependentHeight(db: DbOrTx, hash: string): Promise<number> {
  const [row] = await db.all<{ height: number | null }>(sql`
    with recursive deps(hash, id, depth) as (
      select c.hash, c.id, 1 from ${configBlobs} c where c.base_id = (select id from ${configBlobs} where hash = ${hash})
      union all
      select c.hash, c.id, 1 from ${configBlobs} c where c.base_hash = ${hash}
      union all
      select b.hash, b.id, deps.depth + 1 from ${configBlobs} b join deps on b.base_id = deps.id where deps.depth <= ${MAX_CHAIN}
      union all
      select b.hash, b.id, deps.depth + 1 from ${configBlobs} b join deps on b.base_hash = deps.hash where deps.depth <= ${MAX_CHAIN}
    )
    select max(depth) as height from deps`);
  return Number(row?.height ?? 0);
}

/**
 * A series moved on from `previous` to `next` (whole, see putWholeBlobs): the previous text becomes a delta
 * against the next one. It stays as it is when it is already a delta (it is an older version elsewhere too) or
 * when the chains through it would grow past MAX_CHAIN (it starts a new chain).
 */
export async function demoteBlob(
  tx: DbOrTx,
  previous: { hash: string; text: string },
  next: { hash: string; text: string },
): Promise<void> {
  if (previous.hash === next.hash) return;
  const [row] = await tx
    .select({ encoding: configBlobs.encoding, bytes: sql<number>`length(${configBlobs.content})` })
    .from(configBlobs)
    .where(eq(configBlobs.hash, previous.hash));
  if (!row || !isWhole(row.encoding)) return;
  if ((await dependentHeight(tx, previous.hash)) + 1 > MAX_CHAIN) return;
  const delta = await deltaOf(previous.text, next.text, Number(row.bytes));
  if (delta) await setDelta(tx, previous.hash, next.hash, delta);
}

/**
 * Deletes blobs no version refers to any more. Every other blob that is a delta against one of them is first
 * re-encoded against its nearest ancestor that stays (or whole), so no text is lost and no chain grows.
 */
export async function deleteBlobs(tx: DbOrTx, hashes: readonly string[]): Promise<void> {
  const doomed = new Set(hashes);
  if (!doomed.size) return;
  const parts = Array.from({ length: Math.ceil(doomed.size / CHUNK) }, (_, i) =>
    [...doomed].slice(i * CHUNK, (i + 1) * CHUNK),
  );
  const dependents: { hash: string; base: string }[] = [];
  for (const part of parts) {
    const hashes = JSON.stringify(part);
    const rows = await tx.all<{ hash: string; base: string }>(sql`
      select b.hash, p.hash as base from ${configBlobs} p join ${configBlobs} b on b.base_id = p.id where p.hash in (select value from json_each(${hashes}))
      union all
      select b.hash, b.base_hash as base from ${configBlobs} b where b.base_hash in (select value from json_each(${hashes}))`);
    dependents.push(...rows.filter((r) => !doomed.has(r.hash)));
  }
  for (const d of dependents) {
    const text = await readBlob(tx, d.hash);
    let ancestor: string | null = d.base;
    while (ancestor && doomed.has(ancestor)) ancestor = await blobBase(tx, ancestor);
    const whole = await gzipText(text);
    const delta = ancestor ? await deltaOf(text, await readBlob(tx, ancestor), whole.length) : null;
    if (delta) await setDelta(tx, d.hash, ancestor!, delta);
    else
      await tx
        .update(configBlobs)
        .set({ encoding: "gzip", baseId: null, baseHash: null, dictionaryId: null, content: asContent(whole) })
        .where(eq(configBlobs.hash, d.hash));
  }
  // Doomed blobs may be each other's bases, across statements: unlink them first so the foreign key holds.
  for (const part of parts)
    await tx.update(configBlobs).set({ baseId: null, baseHash: null }).where(inArray(configBlobs.hash, part));
  for (const part of parts) await tx.delete(configBlobs).where(inArray(configBlobs.hash, part));
}
