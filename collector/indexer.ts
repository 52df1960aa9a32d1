import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/logger.ts";
import { indexPendingVersions } from "../src/modules/configs/search-index.ts";
import { describeError } from "./errors.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";

export type IndexerOptions = {
  /** Whether downloads want the collector's time now (any is running). */
  busy: () => boolean;
  /** Whether more downloads wait in the queue than run (a run's jobs not all started yet): no batch then. None: never. */
  waiting?: () => boolean;
  /** While downloads wait, one batch per this interval at most: the index still moves under a queue that never empties. */
  waitingIntervalMs?: number;
  /** How often an indexer with nothing to do looks at the queue. */
  pollIntervalMs: number;
  /** While busy, one batch per this interval at most: the index still moves under constant load. */
  busyIntervalMs: number;
  /** Versions per transaction. */
  batch: number;
};

export const DEFAULT_INDEXER_OPTIONS: Omit<IndexerOptions, "busy"> = {
  pollIntervalMs: 1000,
  busyIntervalMs: 10_000,
  waitingIntervalMs: 300_000,
  batch: 25,
};

/**
 * Indexes the versions storing queued (search-index.ts) in the collector's spare time: batch after batch while
 * no download runs, one batch per busyIntervalMs while some run, and none while more wait in the queue (a task
 * run's jobs not all started: the run's tail leaves room) unless they have waited waitingIntervalMs. Building a
 * version's document costs the event loop more than downloading it did (11 CPU seconds per 1,000 versions of
 * 100 KB), and every session waits while a batch (some 250 ms for 25 versions) runs. Search reads queued
 * versions itself meanwhile, so nothing is missing from its answers, only slower to find.
 */
export function startSearchIndexer(deps: { db: Db; logger: Logger }, options: IndexerOptions) {
  const pause = wakeableSleep();
  let running = true;
  let lastBusyBatch = 0;
  /** Since when downloads have waited in the queue (undefined: none waits), or the last batch taken meanwhile. */
  let waitingSince: number | undefined;
  const due = (busy: boolean) => {
    if (!options.waiting?.()) waitingSince = undefined;
    else if ((waitingSince ??= Date.now()) > Date.now() - (options.waitingIntervalMs ?? 0)) return false;
    return !busy || Date.now() - lastBusyBatch >= options.busyIntervalMs;
  };
  const loop = (async () => {
    while (running) {
      let indexed = 0;
      try {
        const busy = options.busy();
        if (due(busy)) {
          if (busy) lastBusyBatch = Date.now();
          if (waitingSince !== undefined) waitingSince = Date.now();
          const { taken, unreadable } = await indexPendingVersions(deps.db, options.batch);
          indexed = taken;
          if (unreadable.length)
            deps.logger.error("stored configurations could not be read to index them for search", {
              config_ids: unreadable,
            });
        }
      } catch (err) {
        deps.logger.error("search indexing failed; retrying", { error: describeError(err) });
      }
      // A full batch means more may be waiting: go on at once (after I/O) unless downloads need the time.
      if (running) await pause.sleep(indexed === options.batch && !options.busy() ? 0 : options.pollIntervalMs);
    }
  })();
  return {
    /** Stops after the batch in hand; what is still queued waits for the next collector. */
    async stop(): Promise<void> {
      running = false;
      pause.wake();
      await loop;
    },
  };
}
