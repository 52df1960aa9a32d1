import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/kernel/logger.ts";
import { evaluatePendingVersions } from "../src/modules/compliance/index.ts";
import type { IndexerOptions } from "./indexer.ts";
import { startPollingLoop } from "./polling-loop.ts";

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
  let lastBusyBatch = 0;
  return startPollingLoop({
    logger: deps.logger,
    failureMessage: "the after-backup compliance pass failed; retrying",
    intervalMs: options.pollIntervalMs,
    async pass() {
      const busy = options.busy();
      const now = deps.clock.now();
      if (busy && now.getTime() - lastBusyBatch < options.busyIntervalMs) return undefined;
      if (busy) lastBusyBatch = now.getTime();
      const done = await evaluatePendingVersions(deps.db, options.batch, now);
      if (done.summary.evaluated)
        deps.logger.info("evaluated new configurations for compliance", { versions: done.taken, ...done.summary });
      // A full batch means more may be waiting: go on at once unless downloads need the time.
      return done.taken === options.batch && !options.busy() ? 0 : undefined;
    },
  });
}
