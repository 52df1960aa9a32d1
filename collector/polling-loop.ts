import type { Logger } from "../src/kernel/logger.ts";
import { describeError } from "./errors.ts";
import { wakeableSleep } from "./wakeable-sleep.ts";

export type PollingLoopOptions = {
  logger: Logger;
  /** Logged (error level, with the error) when a pass throws; the loop tries again after intervalMs. */
  failureMessage: string;
  /** The pause between passes, unless a pass asks for another. */
  intervalMs: number;
  /** One pass. Returns the pause before the next one in ms (0: more is waiting, go on at once), or nothing for intervalMs. */
  pass: () => Promise<number | undefined>;
};

export type PollingLoop = {
  /** Starts the next pass now rather than at the end of the pause; a wake during a pass skips the pause after it. */
  wake(): void;
  /** Stops after the pass in hand. */
  stop(): Promise<void>;
};

/**
 * A background loop of the collector: one pass at a time (never two at once), a pause between passes that wake()
 * and stop() cut short, and a failed pass logged and tried again. The pass decides what is due (by the injected
 * clock) and how long to pause.
 */
export function startPollingLoop(options: PollingLoopOptions): PollingLoop {
  const pause = wakeableSleep();
  let running = true;
  let woken = false;
  const loop = (async () => {
    while (running) {
      woken = false;
      let pauseMs: number | undefined;
      try {
        pauseMs = await options.pass();
      } catch (err) {
        options.logger.error(options.failureMessage, { error: describeError(err) });
      }
      if (running && !woken) await pause.sleep(pauseMs ?? options.intervalMs);
    }
  })();
  return {
    wake(): void {
      woken = true;
      pause.wake();
    },
    async stop(): Promise<void> {
      running = false;
      pause.wake();
      await loop;
    },
  };
}
