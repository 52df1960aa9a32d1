import type { Db } from "../../../db/client.ts";
import type { DeviceScope } from "../../../platform/auth/scope.ts";
import type { ListQuery } from "../../../platform/http/list.ts";
import { configPage } from "../service.ts";
import { tarEnd, tarFile, type TarPath } from "./tar.ts";
import { readBlobs } from "./blobs.ts";
import { fileNamePart } from "./text.ts";

/** Versions per query: texts of one page are held at once, never the whole export. */
const PAGE_SIZE = 100;
const encoder = new TextEncoder();

/** `<device>/<command>.txt`, file-safe, made unique within the archive ("-2", "-3" ...) when two names collide. */
function pathFor(deviceName: string, command: string, taken: Set<string>): TarPath {
  const prefix = fileNamePart(deviceName, 150);
  const base = fileNamePart(command, 90);
  let name = `${base}.txt`;
  for (let n = 2; taken.has(`${prefix}/${name}`.toLowerCase()); n++) name = `${base}-${n}.txt`;
  taken.add(`${prefix}/${name}`.toLowerCase());
  return { prefix, name };
}

/** The archive's parts: each page of versions becomes its files, then the end blocks. */
async function* tarParts(db: Db, scope: DeviceScope, q: ListQuery): AsyncGenerator<Uint8Array<ArrayBuffer>> {
  const taken = new Set<string>();
  for (let page = 1; ; page++) {
    const rows = await configPage(db, scope, { ...q, page, perPage: PAGE_SIZE });
    const texts = await readBlobs(
      db,
      rows.map((r) => r.row.blobHash),
    );
    for (const { out, row } of rows) {
      const text = texts.get(row.blobHash);
      // Deleted since the page was read: the version is gone, so the archive goes on without it.
      if (text === undefined) continue;
      yield tarFile(pathFor(out.device_name, out.command, taken), encoder.encode(text), row.firstSeenAt);
    }
    if (rows.length < PAGE_SIZE) break;
  }
  yield tarEnd();
}

/**
 * The latest versions the query selects, as a gzip-compressed tar stream. The first page is read before the
 * answer starts, so a failing query still answers with a JSON error rather than a cut-off download.
 */
export async function exportArchive(
  db: Db,
  scope: DeviceScope,
  q: ListQuery,
): Promise<ReadableStream<Uint8Array<ArrayBuffer>>> {
  const parts = tarParts(db, scope, q);
  const first = await parts.next();
  const tar = new ReadableStream<Uint8Array<ArrayBuffer>>({
    async start(controller) {
      if (!first.done) controller.enqueue(first.value);
    },
    async pull(controller) {
      const next = await parts.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await parts.return(undefined);
    },
  });
  return tar.pipeThrough(new CompressionStream("gzip"));
}
