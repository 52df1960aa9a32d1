/** Pure text helpers for stored configurations (Web APIs only: the API on Deno reads what collectors store). */

/**
 * One line ending, no blank lines at the start or end (dropped header lines such as IOS's "Building
 * configuration..." leave one behind), a final newline: so equal configs hash equal.
 */
export function normalizeConfigText(text: string): string {
  // Whole-text passes: splitting 100 KB into lines and joining them again cost the collector 0.4 ms a download.
  // A session's output has its line endings and trailing blanks fixed already (collector/terminal.ts), so each
  // pass runs only when the text needs it: the blanks' regex alone took 0.16 ms per 100 KB.
  const unix = text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
  const lf = endsLineInBlank(unix) ? unix.replace(/[^\S\n]+(?=\n|$)/g, "") : unix;
  let start = 0;
  let end = lf.length;
  while (start < end && lf.charCodeAt(start) === 10) start++;
  while (end > start && lf.charCodeAt(end - 1) === 10) end--;
  return end > start ? lf.slice(start, end) + "\n" : "";
}

const BLANK = /[^\S\n]/;
const isBlank = (text: string, at: number) => {
  const c = text.charCodeAt(at);
  return (c <= 32 || c >= 127) && BLANK.test(text[at]!);
};

/** Whether any line (the last one too) ends in white space other than the line break: only line ends are looked at. */
function endsLineInBlank(text: string): boolean {
  if (text.length && isBlank(text, text.length - 1)) return true;
  for (let at = text.indexOf("\n", 1); at !== -1; at = text.indexOf("\n", at + 1))
    if (isBlank(text, at - 1)) return true;
  return false;
}

/** Lines in a normalised text (each ends in "\n"), counted without splitting it. */
export function lineCount(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

async function pipe(
  bytes: Uint8Array<ArrayBuffer>,
  stream: CompressionStream | DecompressionStream,
): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

type Zlib = {
  gzipSync(b: Uint8Array | string, o?: { level: number }): Uint8Array;
  gunzipSync(b: Uint8Array, o?: { chunkSize?: number }): Uint8Array;
  deflateSync(b: Uint8Array, o: { level: number; dictionary?: Uint8Array }): Uint8Array;
  inflateSync(b: Uint8Array, o?: { dictionary?: Uint8Array; chunkSize?: number }): Uint8Array;
};
/**
 * Node and Deno both lend their zlib through process.getBuiltinModule (no node: import, so this file stays Web
 * APIs only). It matters: search reads hundreds of stored configs per query, and a 30 KB text takes 0.05 ms to
 * inflate through zlib against 0.4-0.9 ms through DecompressionStream. Other runtimes get the stream. Compressing
 * is synchronous too (about 0.6 ms for 100 KB): through zlib's thread pool each text waited for two trips back to a
 * busy event loop, 25 ms a download in bench:collect, and the collector's store thread has nothing else to do.
 */
const zlib = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process?.getBuiltinModule?.(
  "node:zlib",
) as Zlib | undefined;

/**
 * zlib's fastest level, 1: a download's text stays in this form only until storage maintenance recompresses it
 * (blob-recompress.ts: level 9 with the command's dictionary), so the bytes it saves would last a night, and a
 * first backup of 1,000 devices compresses 1,000 texts on the collector's store thread. For a 100 KB running
 * config: 0.45 against 0.62 ms at level 4 (0.56 against 1.06 ms at zlib's default 6), for 15.8 against 13.9 KB.
 */
const GZIP_LEVEL = 1;

export const gzipText = async (text: string): Promise<Uint8Array> =>
  zlib
    ? zlib.gzipSync(text, { level: GZIP_LEVEL }) // encodes the text as UTF-8 itself, without a TextEncoder copy
    : pipe(new TextEncoder().encode(text), new CompressionStream("gzip"));
/**
 * `size`, when known, is the text's length in UTF-8 bytes: zlib then writes it into one buffer of that size
 * instead of 16 KB pieces joined after (a quarter of inflating a 30 KB configuration, which an uncached search
 * does for every text it reads).
 */
const outputFor = (size?: number) =>
  size !== undefined && size < 2 ** 28 ? { chunkSize: Math.max(64, size + 64) } : {};

export const gunzipText = async (bytes: Uint8Array, size?: number): Promise<string> =>
  new TextDecoder().decode(
    zlib ? zlib.gunzipSync(bytes, outputFor(size)) : await pipe(new Uint8Array(bytes), new DecompressionStream("gzip")),
  );

/**
 * zlib's format at its best level with an optional preset dictionary (storage maintenance's recompression,
 * blob-codec.ts): its Adler-32 checks the content as gzip's CRC does. A runtime without zlib cannot apply a
 * dictionary (DecompressionStream takes none), so it refuses such content rather than misread it.
 */
export function deflateBytes(bytes: Uint8Array, dictionary?: Uint8Array): Uint8Array {
  if (!zlib) throw new Error("compressing with a preset dictionary needs node:zlib");
  return zlib.deflateSync(bytes, dictionary ? { level: 9, dictionary } : { level: 9 });
}
export async function inflateText(bytes: Uint8Array, dictionary?: Uint8Array, size?: number): Promise<string> {
  if (zlib)
    return new TextDecoder().decode(
      zlib.inflateSync(bytes, { ...outputFor(size), ...(dictionary ? { dictionary } : {}) }),
    );
  if (dictionary) throw new Error("reading a text compressed with a preset dictionary needs node:zlib");
  return new TextDecoder().decode(await pipe(new Uint8Array(bytes), new DecompressionStream("deflate")));
}

/**
 * A piece of a file name that is safe everywhere (headers, tar paths, Windows): runs of anything but letters,
 * digits, dot, underscore and dash become one dash; no leading dots or dashes; at most `max` characters.
 * "show running-config | section bgp" -> "show-running-config-section-bgp".
 */
export function fileNamePart(text: string, max = 80): string {
  const safe = text
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[.-]+/, "")
    .slice(0, max)
    .replace(/-+$/, "");
  return safe || "unnamed";
}

/** The download name of one version: <device>_<command>_<version>.txt. */
export const configFileName = (deviceName: string, command: string, version: number) =>
  `${fileNamePart(deviceName)}_${fileNamePart(command)}_${version}.txt`;
