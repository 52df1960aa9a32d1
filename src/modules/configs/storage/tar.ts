/**
 * A minimal ustar (POSIX tar) writer for regular files: enough for an archive of text files that tar, 7-Zip
 * and every tar library read. Web APIs only; gzip is CompressionStream's job.
 */

const BLOCK = 512;
const encoder = new TextEncoder();

/** A path as ustar stores it: `prefix` (a directory, at most 155 bytes) and `name` (at most 100 bytes). */
export type TarPath = { prefix: string; name: string };

function put(header: Uint8Array, offset: number, length: number, text: string): void {
  const bytes = encoder.encode(text);
  if (bytes.length > length) throw new Error(`tar header field of ${length} bytes cannot hold '${text}'`);
  header.set(bytes, offset);
}

const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, "0") + "\0";

/** The 512-byte header of one regular file. */
export function tarHeader(path: TarPath, size: number, mtime: Date): Uint8Array<ArrayBuffer> {
  const h = new Uint8Array(BLOCK);
  put(h, 0, 100, path.name);
  put(h, 100, 8, octal(0o644, 8));
  put(h, 108, 8, octal(0, 8));
  put(h, 116, 8, octal(0, 8));
  put(h, 124, 12, octal(size, 12));
  put(h, 136, 12, octal(Math.max(0, Math.floor(mtime.getTime() / 1000)), 12));
  put(h, 148, 8, "        ");
  put(h, 156, 1, "0");
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 345, 155, path.prefix);
  let sum = 0;
  for (const b of h) sum += b;
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** Header, content and padding to the next block: one file's part of the archive. */
export function tarFile(path: TarPath, content: Uint8Array, mtime: Date): Uint8Array<ArrayBuffer> {
  const padded = Math.ceil(content.length / BLOCK) * BLOCK;
  const out = new Uint8Array(BLOCK + padded);
  out.set(tarHeader(path, content.length, mtime), 0);
  out.set(content, BLOCK);
  return out;
}

/** Two zero blocks end an archive. */
export const tarEnd = () => new Uint8Array(2 * BLOCK);
