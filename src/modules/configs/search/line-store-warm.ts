import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { failureReason } from "../../../kernel/error-reason.ts";
import type { Logger } from "../../../kernel/logger.ts";
import { configs } from "../../../db/schema/index.ts";
import { readBlobRuns } from "../storage/blobs.ts";
import { currentLineStore, LINE_STORE_BUDGET, untilNoSearchRuns } from "./line-store.ts";
import { latestVersionsByScan } from "./search.ts";

/** Texts read in one statement: a few milliseconds of the event loop, as one batch of a search's. */
const WARM_BATCH = 64;

export type WarmResult = { versions: number; stoppedBy?: "budget" | "signal" };

/**
 * Reads the latest version of every device and command into search's line store (line-store.ts), newest first,
 * in the background after the API starts. Without it the first searches after a start read and inflate every
 * text they check: the first search after a start for a line every configuration holds took 261 ms through the
 * service, 63 ms with it, 14 ms once warm (2,000 devices; reading them took 0.8 s). It reads only while no search
 * runs, a batch at a time, each added to the store before the next is read (the store's own background adding, a
 * few milliseconds a turn), and stops once the store holds `maxBytes` (half its budget: the rest is for what
 * searches read, older versions among it) or its lines three quarters of what replaces the store, or `signal`
 * aborts (the service stopping).
 */
export async function warmLineStore(
  db: DbOrTx,
  options: { maxBytes?: number; signal?: AbortSignal } = {},
): Promise<WarmResult> {
  const maxBytes = options.maxBytes ?? LINE_STORE_BUDGET / 2;
  const rows = await db.all<{ hash: string }>(
    sql`select ${configs.blobHash} as hash from ${configs} where ${latestVersionsByScan} order by ${configs.id} desc`,
  );
  let versions = 0;
  for (let i = 0; i < rows.length; i += WARM_BATCH) {
    await untilNoSearchRuns();
    if (options.signal?.aborted) return { versions, stoppedBy: "signal" };
    const store = currentLineStore();
    // The lines stop short of what would replace the store (LineStore.full), so that the lines of what searches
    // read later (other commands, older versions' edits) do not empty it.
    if (store.bytes >= maxBytes || store.linesBytes >= (store.budget * 3) / 8) return { versions, stoppedBy: "budget" };
    // A text a search read meanwhile is read again here, but not added twice (later).
    const texts = await readBlobRuns(
      db,
      rows.slice(i, i + WARM_BATCH).map((r) => r.hash),
    );
    for (const [hash, text] of texts) store.later(hash, text);
    await store.settled();
    versions += texts.size;
  }
  return { versions };
}

/** warmLineStore in the background of a starting API, its outcome logged; `stop` before the database closes. */
export function startLineStoreWarmUp(db: DbOrTx, logger: Logger): { stop(): void } {
  const stopping = new AbortController();
  const started = performance.now();
  warmLineStore(db, { signal: stopping.signal }).then(
    (warmed) => {
      if (warmed.stoppedBy === "signal" || !warmed.versions) return;
      const store = currentLineStore();
      logger.info("search's line store holds the latest versions", {
        versions: warmed.versions,
        lines: store.lineCount,
        mb: Math.round(store.bytes / 1e5) / 10,
        seconds: Math.round(performance.now() - started) / 1000,
        ...(warmed.stoppedBy === "budget"
          ? { stopped: "the store holds what it may at start; searches read the other versions from the database" }
          : {}),
      });
    },
    (err: unknown) =>
      stopping.signal.aborted ||
      logger.warn("search's line store could not read the latest versions; searches read them from the database", {
        reason: failureReason(err),
      }),
  );
  return { stop: () => stopping.abort() };
}
