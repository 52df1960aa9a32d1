/**
 * Stored configuration texts (config_blobs), one row per distinct text. The latest version of a series is whole
 * (gzip); when a newer one arrives, the one before it becomes a reverse delta against it (a gzipped line edit
 * script, blob-delta.ts), so an old version costs about what changed. Reading one follows its chain of bases to
 * a whole text and applies the deltas back.
 *
 * Invariants, which every writer here keeps:
 * - A blob becomes a delta only against a whole blob or one of its own current ancestors, so chains never loop.
 * - No chain is longer than MAX_CHAIN: a version that would lengthen one past it stays whole.
 * - A base is never deleted while a delta needs it (deleteBlobs re-encodes the dependents first; the base_hash
 *   foreign key makes any other delete fail instead of losing texts).
 */
import { eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { configBlobs } from "../../db/schema/index.ts";
import { decodeLineDelta, encodeLineDelta } from "./blob-delta.ts";
import { gunzipText, gzipText } from "./text.ts";

/** Deltas one read may apply at most. */
export const MAX_CHAIN = 20;
/** Ids per statement: well under SQLite's limit on bound parameters. */
const CHUNK = 500;

// drizzle types blob columns as Buffer; libSQL takes any Uint8Array, so no Node Buffer is needed here.
const asContent = (bytes: Uint8Array) => bytes as unknown as Buffer;

type BlobRow = typeof configBlobs.$inferSelect;

async function blobRow(db: DbOrTx, hash: string): Promise<BlobRow> {
  const [row] = await db.select().from(configBlobs).where(eq(configBlobs.hash, hash));
  if (!row) throw new Error(`config blob ${hash} is missing`);
  return row;
}

/**
 * The last few texts one reader rebuilt. A search walks each series newest first, so with one of these an older
 * version costs one delta rather than its whole chain. Per request: nothing is cached across requests.
 */
export class RecentTexts {
  private readonly texts = new Map<string, string>();
  constructor(private readonly max = 4) {}
  get(hash: string) {
    return this.texts.get(hash);
  }
  hashes() {
    return [...this.texts.keys()];
  }
  set(hash: string, text: string) {
    this.texts.set(hash, text);
    if (this.texts.size > this.max) this.texts.delete(this.texts.keys().next().value!);
  }
}

/**
 * The text of a stored blob, rebuilt through its deltas. The chain is read in one statement, so a purge
 * re-encoding it meanwhile cannot hand back half of an old chain. (Deltas are checked when written, and each
 * part is gzip with its own checksum, so reads do not hash the text again: that would cost more than the rebuild.)
 */
export async function readBlob(db: DbOrTx, hash: string, recent?: RecentTexts): Promise<string> {
  const known = recent?.get(hash);
  if (known !== undefined) return known;
  // The chain is read only down to a text this reader already has.
  const stopAt = recent?.hashes() ?? [];
  const chain = await db.all<{ hash: string; encoding: string; content: ArrayBuffer | Uint8Array }>(sql`
    with recursive chain(hash, base_hash, encoding, content, n) as (
      select hash, base_hash, encoding, content, 0 from ${configBlobs} where hash = ${hash}
      union all
      select b.hash, b.base_hash, b.encoding, b.content, chain.n + 1 from ${configBlobs} b join chain on b.hash = chain.base_hash
      where chain.encoding = 'delta' and chain.n < ${MAX_CHAIN * 2}${stopAt.length ? sql` and chain.hash not in (${sql.join(stopAt.map((h) => sql`${h}`), sql`, `)})` : sql``}
    )
    select hash, encoding, content from chain order by n`);
  if (!chain.length) throw new Error(`config blob ${hash} is missing`);
  let start = chain.findIndex((link) => recent?.get(link.hash) !== undefined);
  let text: string;
  if (start >= 0) text = recent!.get(chain[start]!.hash)!;
  else {
    start = chain.length - 1;
    if (chain[start]!.encoding !== "gzip") throw new Error(`config blob ${hash} has a broken delta chain`);
    text = await gunzipText(new Uint8Array(chain[start]!.content));
  }
  for (let i = start - 1; i >= 0; i--) text = decodeLineDelta(await gunzipText(new Uint8Array(chain[i]!.content)), text);
  recent?.set(hash, text);
  return text;
}

/** Stores a new text whole, or makes an existing one whole: the latest version's text is whole and may be a base. */
export async function putWholeBlob(tx: DbOrTx, input: { hash: string; text: string; size: number; now: Date }): Promise<void> {
  const [existing] = await tx.select({ encoding: configBlobs.encoding }).from(configBlobs).where(eq(configBlobs.hash, input.hash));
  if (existing?.encoding === "gzip") return;
  const content = asContent(await gzipText(input.text));
  if (existing) await tx.update(configBlobs).set({ encoding: "gzip", baseHash: null, content }).where(eq(configBlobs.hash, input.hash));
  else await tx.insert(configBlobs).values({ hash: input.hash, encoding: "gzip", content, size: input.size, createdAt: input.now });
}

/** `text` as a gzipped delta against `base`, when that rebuilds it exactly in fewer than `limit` bytes. */
async function deltaOf(text: string, base: string, limit: number): Promise<Uint8Array | null> {
  const script = encodeLineDelta(text, base);
  const delta = await gzipText(script);
  return delta.length < limit && decodeLineDelta(script, base) === text ? delta : null;
}

const setDelta = (tx: DbOrTx, hash: string, baseHash: string, delta: Uint8Array) =>
  tx.update(configBlobs).set({ encoding: "delta", baseHash, content: asContent(delta) }).where(eq(configBlobs.hash, hash));

/** The longest chain of deltas that leads to this blob (0: nothing is a delta against it). */
async function dependentHeight(db: DbOrTx, hash: string): Promise<number> {
  const [row] = await db.all<{ height: number | null }>(sql`
    with recursive deps(hash, depth) as (
      select ${configBlobs.hash}, 1 from ${configBlobs} where ${configBlobs.baseHash} = ${hash}
      union all
      select b.hash, deps.depth + 1 from ${configBlobs} b join deps on b.base_hash = deps.hash where deps.depth <= ${MAX_CHAIN}
    )
    select max(depth) as height from deps`);
  return Number(row?.height ?? 0);
}

/**
 * A series moved on from `previous` to `next` (whole, see putWholeBlob): the previous text becomes a delta
 * against the next one. It stays as it is when it is already a delta (it is an older version elsewhere too) or
 * when the chains through it would grow past MAX_CHAIN (it starts a new chain).
 */
export async function demoteBlob(tx: DbOrTx, previous: { hash: string; text: string }, next: { hash: string; text: string }): Promise<void> {
  if (previous.hash === next.hash) return;
  const [row] = await tx
    .select({ encoding: configBlobs.encoding, bytes: sql<number>`length(${configBlobs.content})` })
    .from(configBlobs)
    .where(eq(configBlobs.hash, previous.hash));
  if (row?.encoding !== "gzip") return;
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
  const parts = Array.from({ length: Math.ceil(doomed.size / CHUNK) }, (_, i) => [...doomed].slice(i * CHUNK, (i + 1) * CHUNK));
  const dependents: { hash: string; baseHash: string | null }[] = [];
  for (const part of parts) {
    const rows = await tx.select({ hash: configBlobs.hash, baseHash: configBlobs.baseHash }).from(configBlobs).where(inArray(configBlobs.baseHash, part));
    dependents.push(...rows.filter((r) => !doomed.has(r.hash)));
  }
  for (const d of dependents) {
    const text = await readBlob(tx, d.hash);
    let ancestor = d.baseHash;
    while (ancestor && doomed.has(ancestor)) ancestor = (await blobRow(tx, ancestor)).baseHash;
    const whole = await gzipText(text);
    const delta = ancestor ? await deltaOf(text, await readBlob(tx, ancestor), whole.length) : null;
    if (delta) await setDelta(tx, d.hash, ancestor!, delta);
    else await tx.update(configBlobs).set({ encoding: "gzip", baseHash: null, content: asContent(whole) }).where(eq(configBlobs.hash, d.hash));
  }
  // Doomed blobs may be each other's bases, across statements: unlink them first so the foreign key holds.
  for (const part of parts) await tx.update(configBlobs).set({ baseHash: null }).where(inArray(configBlobs.hash, part));
  for (const part of parts) await tx.delete(configBlobs).where(inArray(configBlobs.hash, part));
}
