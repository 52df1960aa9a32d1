import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/kernel/logger.ts";
import { indexPendingVersions } from "../src/modules/configs/index.ts";
import { startPollingLoop } from "./polling-loop.ts";

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
export function startSearchIndexer(deps: { db: Db; clock: Clock; logger: Logger }, options: IndexerOptions) {
  let lastBusyBatch = 0;
  /** Since when downloads have waited in the queue (undefined: none waits), or the last batch taken meanwhile. */
  let waitingSince: number | undefined;
  const due = (busy: boolean, now: number) => {
    if (!options.waiting?.()) waitingSince = undefined;
    else if ((waitingSince ??= now) > now - (options.waitingIntervalMs ?? 0)) return false;
    return !busy || now - lastBusyBatch >= options.busyIntervalMs;
  };
  return startPollingLoop({
    logger: deps.logger,
    failureMessage: "search indexing failed; retrying",
    intervalMs: options.pollIntervalMs,
    async pass() {
      const busy = options.busy();
      const now = deps.clock.now().getTime();
      if (!due(busy, now)) return undefined;
      if (busy) lastBusyBatch = now;
      if (waitingSince !== undefined) waitingSince = now;
      const { taken, unreadable } = await indexPendingVersions(deps.db, options.batch);
      if (unreadable.length)
        deps.logger.error("stored configurations could not be read to index them for search", {
          config_ids: unreadable,
        });
      // A full batch means more may be waiting: go on at once (after I/O) unless downloads need the time.
      return taken === options.batch && !options.busy() ? 0 : undefined;
    },
  });
}
