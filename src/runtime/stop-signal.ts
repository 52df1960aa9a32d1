/**
 * What a stop signal means to a launcher that may already be stopping. A signal sent to a whole process group
 * (`timeout`, a service manager stopping a control group, a terminal's Ctrl-C) reaches the API and the wrapper
 * that started it, and wrappers pass it on to the API a moment later (`npm start` does for SIGTERM, `deno task`
 * for both): that second delivery is the same request. Forcing the exit on it cut requests in flight and skipped
 * the WAL checkpoint on such stops. A signal that comes later is someone asking again: that one forces the exit.
 */
export const SAME_STOP_WITHIN_MS = 1000;

/** "first" starts the stop; "same" is a forwarded copy of the signal that started it; "force" ends it now. */
export function stopSignalMeaning(stoppingSince: number | undefined, now: number): "first" | "same" | "force" {
  if (stoppingSince === undefined) return "first";
  return now - stoppingSince < SAME_STOP_WITHIN_MS ? "same" : "force";
}
