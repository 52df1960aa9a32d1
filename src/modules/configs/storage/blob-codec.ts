/**
 * How a stored blob's content is compressed. A download stores gzip at level 1, the fastest ("gzip" for a whole
 * text, "delta" for a line edit script, blobs.ts); storage maintenance (blob-recompress.ts) rewrites both in
 * zlib's format at level 9 with the command's preset dictionary ("deflate", "deflate-delta"): a sample
 * configuration of the same command, so the lines and phrases every device shares cost a few bytes each.
 */
import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { type configBlobs, configDictionaries } from "../../../db/schema/index.ts";
import { deflateBytes, gunzipText, inflateText } from "./text.ts";

export type BlobEncoding = typeof configBlobs.$inferSelect.encoding;

export const isWhole = (encoding: string) => encoding === "gzip" || encoding === "deflate";
export const isDelta = (encoding: string) => encoding === "delta" || encoding === "deflate-delta";
/** The encoding maintenance rewrites a download's encoding to. */
export const recompressed = (encoding: "gzip" | "delta"): BlobEncoding =>
  encoding === "gzip" ? "deflate" : "deflate-delta";

/**
 * Dictionaries by content hash: never changed once written, so a cached one is never stale, whatever database
 * it came from. Few (one per command with enough devices), at most 32 KB each; the bound only guards a process
 * that meets many databases (tests).
 */
const dictionaries = new Map<string, Uint8Array>();
const MAX_CACHED = 64;

/** Loads the dictionaries of these hashes that are not cached yet. */
export async function loadDictionaries(db: DbOrTx, hashes: Iterable<string>): Promise<void> {
  const missing = [...new Set(hashes)].filter((h) => !dictionaries.has(h));
  if (!missing.length) return;
  const rows = await db
    .select({ hash: configDictionaries.hash, content: configDictionaries.content })
    .from(configDictionaries)
    .where(inArray(configDictionaries.hash, missing));
  for (const row of rows) {
    if (dictionaries.size >= MAX_CACHED) dictionaries.delete(dictionaries.keys().next().value!);
    dictionaries.set(row.hash, new Uint8Array(row.content));
  }
}

/**
 * The text (or delta script) a blob's content holds. A dictionary must have been loaded (loadDictionaries);
 * a missing one is an error, never a wrong text.
 */
export function decodeContent(row: {
  hash: string;
  encoding: string;
  content: Uint8Array;
  dictionary: string | null;
  size?: number;
}): Promise<string> {
  // A whole text's stored size is its own; a delta's is the text it rebuilds, not the script.
  const size = row.encoding === "gzip" || row.encoding === "deflate" ? row.size : undefined;
  if (row.encoding === "gzip" || row.encoding === "delta") return gunzipText(row.content, size);
  return inflateText(row.content, row.dictionary ? cachedDictionary(row.hash, row.dictionary) : undefined, size);
}

/** A loaded dictionary (loadDictionaries), for the blob that needs it. */
export function cachedDictionary(blobHash: string, hash: string): Uint8Array {
  const dictionary = dictionaries.get(hash);
  if (!dictionary) throw new Error(`config blob ${blobHash} needs dictionary ${hash}, which is missing`);
  return dictionary;
}

/** Compresses a text or script the way maintenance stores it, checking that it inflates back to the same. */
export async function encodeContent(text: string, dictionary: Uint8Array): Promise<Uint8Array> {
  const bytes = deflateBytes(new TextEncoder().encode(text), dictionary);
  if ((await inflateText(bytes, dictionary)) !== text)
    throw new Error("recompressed content does not inflate back to its text");
  return bytes;
}
