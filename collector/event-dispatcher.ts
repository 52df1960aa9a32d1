import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/kernel/logger.ts";
import type { EventConsumer } from "../src/modules/events/index.ts";
import { DISPATCH_BATCH, dispatchEvents } from "../src/modules/events/index.ts";
import { pruneEvents } from "../src/modules/events/index.ts";
import { startPollingLoop } from "./polling-loop.ts";

export type DispatcherOptions = { pollIntervalMs: number; pruneIntervalMs: number };
export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = { pollIntervalMs: 1000, pruneIntervalMs: 3_600_000 };

/**
 * Turns new outbox events into event jobs (src/modules/events/dispatch.ts), batch after batch while events wait,
 * then once per poll interval, and prunes old events and event jobs once per prune interval (retention.ts).
 * Every collector runs one: the claim makes each event dispatched once.
 */
export function startEventDispatcher(
  deps: { db: Db; clock: Clock; logger: Logger; consumers: readonly EventConsumer[]; dispatched?: () => void },
  options: DispatcherOptions,
) {
  let lastPrune = 0;
  return startPollingLoop({
    logger: deps.logger,
    failureMessage: "dispatching events failed; retrying",
    intervalMs: options.pollIntervalMs,
    async pass() {
      const taken = await dispatchEvents(deps.db, deps.consumers, deps.clock.now());
      if (taken) deps.dispatched?.();
      const now = deps.clock.now();
      if (now.getTime() - lastPrune >= options.pruneIntervalMs) {
        lastPrune = now.getTime();
        const pruned = await pruneEvents(deps.db, now);
        if (pruned.events || pruned.jobs) deps.logger.info("pruned old events", pruned);
      }
      return taken === DISPATCH_BATCH ? 0 : undefined;
    },
  });
}
