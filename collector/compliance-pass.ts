import type { Clock } from "../src/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/logger.ts";
import { evaluatePendingVersions } from "../src/modules/compliance/pending.ts";
import { describeError } from "./errors.ts";
import type { IndexerOptions } from "./indexer.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";

/** Paced like the search indexer: versions per batch, and how often it looks while idle or while downloads run. */
export const DEFAULT_COMPLIANCE_PASS_OPTIONS: Omit<IndexerOptions, "busy"> = {
  pollIntervalMs: 1000,
  busyIntervalMs: 5000,
  batch: 25,
};

/**
 * The after-backup compliance pass: evaluates the versions storing queued (src/modules/compliance/pending.ts)
 * in the collector's spare time, batch after batch while no download runs and one batch per busyIntervalMs while
 * any does, so evaluating never sits on a download's path.
 */
export function startCompliancePass(deps: { db: Db; clock: Clock; logger: Logger }, options: IndexerOptions) {
  const pause = wakeableSleep();
  let running = true;
  let lastBusyBatch = 0;
  const loop = (async () => {
    while (running) {
      let taken = 0;
      try {
        const busy = options.busy();
        if (!busy || Date.now() - lastBusyBatch >= options.busyIntervalMs) {
          if (busy) lastBusyBatch = Date.now();
          const done = await evaluatePendingVersions(deps.db, options.batch, deps.clock.now());
          taken = done.taken;
          if (done.summary.evaluated)
            deps.logger.info("evaluated new configurations for compliance", { versions: taken, ...done.summary });
        }
      } catch (err) {
        deps.logger.error("the after-backup compliance pass failed; retrying", { error: describeError(err) });
      }
      // A full batch means more may be waiting: go on at once unless downloads need the time.
      if (running) await pause.sleep(taken === options.batch && !options.busy() ? 0 : options.pollIntervalMs);
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
