import type { Clock } from "../src/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/logger.ts";
import type { EventConsumer } from "../src/modules/events/consumer.ts";
import { DISPATCH_BATCH, dispatchEvents } from "../src/modules/events/dispatch.ts";
import { pruneEvents } from "../src/modules/events/retention.ts";
import { describeError } from "./errors.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";

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
  const pause = wakeableSleep();
  let running = true;
  let lastPrune = 0;
  const loop = (async () => {
    while (running) {
      let taken = 0;
      try {
        taken = await dispatchEvents(deps.db, deps.consumers, deps.clock.now());
        if (taken) deps.dispatched?.();
        if (Date.now() - lastPrune >= options.pruneIntervalMs) {
          lastPrune = Date.now();
          const pruned = await pruneEvents(deps.db, deps.clock.now());
          if (pruned.events || pruned.jobs) deps.logger.info("pruned old events", pruned);
        }
      } catch (err) {
        deps.logger.error("dispatching events failed; retrying", { error: describeError(err) });
      }
      if (running) await pause.sleep(taken === DISPATCH_BATCH ? 0 : options.pollIntervalMs);
    }
  })();
  return {
    async stop(): Promise<void> {
      running = false;
      pause.wake();
      await loop;
    },
  };
}
