/**
 * Storage maintenance's recompression (as `git gc` repacks): texts and deltas as downloads stored them (gzip,
 * level 1, each on its own: fast on the collector's path) are rewritten in zlib's format at level 9 with a
 * preset dictionary per command (blob-codec.ts). A configuration shares most of its lines and phrases with the
 * other devices' (the template, the interface and ACL layout), and deflate can refer back into a dictionary as
 * into the text itself: on bench:configs' fleet a whole text shrinks from 5.1 to 2.9 KB, a delta from 177 to
 * about 80 B.
 *
 * The dictionary is one of the command's own texts: the one that compresses a sample of the others best (a
 * dictionary of the lines most devices share did worse: 3.5 KB a text). It is chosen once per command, when the
 * command has enough whole texts to choose from, and kept: changing it would mean recompressing everything.
 */
import { and, notInArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { configBlobs, configDictionaries, configs } from "../../../db/schema/index.ts";
import { cachedDictionary, encodeContent, loadDictionaries, recompressed } from "./blob-codec.ts";
import type { MaintenanceProgress } from "./maintenance-progress.ts";
import { baseIdOf } from "./blobs.ts";
import { deflateBytes, gunzipText } from "./text.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";

/** A command needs this many whole texts before one is chosen as its dictionary: fewer tell too little. */
export const MIN_DICTIONARY_TEXTS = 20;
/** deflate reaches back at most 32 KB: a longer dictionary's start could never be used. */
const DICTIONARY_BYTES = 32 * 1024;
/** Texts tried as the dictionary, and texts each is tried on. */
const CANDIDATES = 12;
const SAMPLE = 24;
/** Devices whose texts are recompressed per transaction: a collector storing meanwhile waits for one batch at most. */
const DEVICES_PER_BATCH = 20;
/** A progress line at most this often (texts); the first recompression of a large database takes minutes. */
const PROGRESS_EVERY_TEXTS = 2000;

export type RecompressReport = { dictionariesAdded: number; textsRecompressed: number };

const asContent = (bytes: Uint8Array) => bytes as unknown as Buffer;
/** The command a blob is a version of (the first by name, in the rare case two commands printed the same text). */
const commandOf = (blobHash: SQL | SQLiteColumn) =>
  sql<string | null>`(select min(${configs.command}) from ${configs} where ${configs.blobHash} = ${blobHash})`;

/** The `count` texts at even steps through the command's whole texts (hash order: as good as random). */
async function spreadTexts(db: DbOrTx, command: string, count: number, skip = 0): Promise<string[]> {
  const rows = await db.all<{ content: ArrayBuffer }>(sql`
    select b.content from ${configBlobs} b
    where b.encoding = 'gzip' and b.hash in (select ${configs.blobHash} from ${configs} where ${configs.command} = ${command})
    order by b.hash`);
  const step = Math.max(1, Math.floor(rows.length / count));
  const picked = rows.filter((_, i) => i % step === skip % step).slice(0, count);
  return Promise.all(picked.map((r) => gunzipText(new Uint8Array(r.content))));
}

/**
 * The end of the text that compresses the sample best, as a dictionary. It starts at a line, so it is whole
 * UTF-8 (its hash is the hash of its text).
 */
export function chooseDictionary(candidates: readonly string[], sample: readonly string[]): Uint8Array {
  const encoder = new TextEncoder();
  const tail = (text: string) => {
    const bytes = encoder.encode(text);
    if (bytes.length <= DICTIONARY_BYTES) return bytes;
    const cut = bytes.indexOf(10, bytes.length - DICTIONARY_BYTES);
    return bytes.slice(cut < 0 ? bytes.length : cut + 1);
  };
  let best: { bytes: number; dictionary: Uint8Array } | undefined;
  for (const candidate of candidates) {
    const dictionary = tail(candidate);
    const bytes = sample.reduce(
      (n, text) => n + (text === candidate ? 0 : deflateBytes(encoder.encode(text), dictionary).length),
      0,
    );
    if (!best || bytes < best.bytes) best = { bytes, dictionary };
  }
  return best!.dictionary;
}

/** Adds a dictionary for every command with enough whole texts that has none; says how many. */
async function addDictionaries(db: Db, now: Date): Promise<number> {
  const commands = await db.all<{ command: string }>(sql`
    select ${configs.command} as command from ${configs} join ${configBlobs} b on b.hash = ${configs.blobHash}
    where b.encoding in ('gzip', 'deflate') and ${configs.command} not in (select ${configDictionaries.command} from ${configDictionaries})
    group by ${configs.command} having count(distinct b.hash) >= ${MIN_DICTIONARY_TEXTS}`);
  for (const { command } of commands) {
    const dictionary = chooseDictionary(
      await spreadTexts(db, command, CANDIDATES),
      await spreadTexts(db, command, SAMPLE, 1),
    );
    const hash = await sha256Hex(new TextDecoder().decode(dictionary));
    await db.insert(configDictionaries).values({ command, hash, content: asContent(dictionary), createdAt: now });
  }
  return commands.length;
}

type Pending = {
  hash: string;
  encoding: "gzip" | "delta";
  base_id: number | null;
  base_hash: string | null;
  content: ArrayBuffer;
  size: number;
  created_at: number;
  dictionaryId: number;
  dictionary: string;
};

/**
 * Recompresses the blobs of these devices' versions in one transaction (read and written there, so no download
 * interleaves). Each is written anew (insert or replace: the foreign keys are checked when the statement ends,
 * by when the text is back under its hash) rather than updated in place: a row that shrank in place leaves its
 * page mostly empty, and SQLite merges pages only when they are nearly so (a quarter of the table was free space
 * on bench:configs). Written series by series, latest first, they fill fresh pages, each series' versions together.
 */
async function recompressDevices(db: Db, deviceIds: readonly number[]): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx.all<Pending>(sql`
      select b.hash, b.encoding, b.base_id, b.base_hash, b.content, b.size, b.created_at, d.id as dictionaryId, d.hash as dictionary
      from ${configs} c join ${configBlobs} b on b.hash = c.blob_hash join ${configDictionaries} d on d.command = ${commandOf(sql`b.hash`)}
      where c.device_id in (select value from json_each(${JSON.stringify(deviceIds)})) and b.encoding in ('gzip', 'delta')
      order by c.device_id, c.command, c.version desc`);
    await loadDictionaries(
      tx,
      rows.map((r) => r.dictionary),
    );
    const written = new Set<string>();
    for (const row of rows) {
      if (written.has(row.hash)) continue;
      const content = new Uint8Array(row.content);
      const text = await gunzipText(content);
      // A whole text must be the one its address names: recompressing must not carry a corrupt text forward.
      if (row.encoding === "gzip" && (await sha256Hex(text)) !== row.hash)
        throw new Error(`config blob ${row.hash} is corrupt: its text has another hash`);
      const bytes = await encodeContent(text, cachedDictionary(row.hash, row.dictionary));
      if (bytes.length >= content.length) continue;
      // A delta from before base ids names its base by id from now on. (The id is read back now: writing this
      // batch's rows anew gives some of them one.)
      const baseId = row.base_hash ? await baseIdOf(tx, row.base_hash) : row.base_id;
      const [{ id } = { id: null }] = await tx.all<{ id: number | null }>(
        sql`select id from ${configBlobs} where hash = ${row.hash}`,
      );
      await tx.run(sql`insert or replace into ${configBlobs} (hash, encoding, id, base_id, base_hash, dictionary_id, content, size, created_at)
        values (${row.hash}, ${recompressed(row.encoding)}, ${id}, ${baseId}, null, ${row.dictionaryId}, ${asContent(bytes)}, ${row.size}, ${row.created_at})`);
      written.add(row.hash);
    }
    return written.size;
  });
}

export async function recompressConfigTexts(
  db: Db,
  now: Date,
  progress?: MaintenanceProgress,
): Promise<RecompressReport> {
  const dictionariesAdded = await addDictionaries(db, now);
  let textsRecompressed = 0;
  let reported = 0;
  // Devices with versions still as a download stored them, of a command that has a dictionary, a few at a time.
  for (let after = 0; ; ) {
    const batch = await db.all<{ id: number }>(sql`
      select distinct c.device_id as id from ${configs} c join ${configBlobs} b on b.hash = c.blob_hash
      where c.device_id > ${after} and b.encoding in ('gzip', 'delta') and c.command in (select ${configDictionaries.command} from ${configDictionaries})
      order by c.device_id limit ${DEVICES_PER_BATCH}`);
    if (!batch.length) break;
    textsRecompressed += await recompressDevices(
      db,
      batch.map((d) => Number(d.id)),
    );
    after = Number(batch.at(-1)!.id);
    if (progress && textsRecompressed - reported >= PROGRESS_EVERY_TEXTS) {
      progress(`storage: recompressed ${textsRecompressed} texts so far`);
      reported = textsRecompressed;
    }
  }
  // A dictionary goes once no text uses it and its command is gone (the key on dictionary_id guards the rest).
  await db.delete(configDictionaries).where(
    and(
      notInArray(configDictionaries.command, db.selectDistinct({ command: configs.command }).from(configs)),
      notInArray(
        configDictionaries.id,
        db
          .select({ id: sql`${configBlobs.dictionaryId}` })
          .from(configBlobs)
          .where(sql`${configBlobs.dictionaryId} is not null`),
      ),
    ),
  );
  return { dictionariesAdded, textsRecompressed };
}
