import type { Clock } from "../../kernel/clock.ts";

export type RateDecision = { allowed: boolean; limit: number; remaining: number; resetAt: number };
export type RateLimiter = {
  hit(key: string): RateDecision;
  /** How many keys the limiter holds now: a key idle for a whole window is dropped. */
  trackedKeys(): number;
};

/**
 * The window counts whole seconds: this one and the 60 before it. Counting 61 buckets rather than 60 makes the
 * window at least 60 s long wherever "now" falls inside the current second, so no 60 s stretch of real time can
 * pass more than the limit; the price is that a request can be held up to one second longer than strictly needed.
 */
const BUCKETS = 61;

type KeyWindow = { counts: Uint32Array; second: number; total: number };

/**
 * A sliding one-minute window per key, in process memory: per-second counts in a ring of 61, so a key costs a few
 * hundred bytes whatever the limit, and no 60 s of real time passes more than the limit (a fixed clock-minute
 * window let a burst at :59 and another at :00 pass twice the limit). Refused requests are not counted, so a
 * client that retries as told by Retry-After gets through. Each API process enforces the limit on its own, so N
 * replicas behind a balancer allow up to N times the limit; that trade keeps the hot path free of a database
 * write per request.
 */
export function createRateLimiter(limitPerMinute: number, clock: Clock): RateLimiter {
  const windows = new Map<string, KeyWindow>();
  let lastSweep = 0;

  /** Moves a key's ring forward to `second`, emptying the buckets that left the window. */
  function slide(window: KeyWindow, second: number): void {
    if (second <= window.second) return; // the clock stood still (or stepped back): count it in the newest bucket
    if (second - window.second >= BUCKETS) {
      window.counts.fill(0);
      window.total = 0;
    } else {
      for (let s = window.second + 1; s <= second; s++) {
        window.total -= window.counts[s % BUCKETS]!;
        window.counts[s % BUCKETS] = 0;
      }
    }
    window.second = second;
  }

  /** The epoch second at which the oldest counted request leaves the window, freeing a place. */
  function nextRelease(window: KeyWindow): number {
    for (let s = window.second - BUCKETS + 1; s <= window.second; s++) {
      if (window.counts[((s % BUCKETS) + BUCKETS) % BUCKETS]! > 0) return s + BUCKETS;
    }
    return window.second + 1;
  }

  /** Drops keys whose whole window has passed, at most once per window, so memory follows the active keys. */
  function sweep(second: number): void {
    if (second - lastSweep < BUCKETS) return;
    lastSweep = second;
    for (const [key, window] of windows) if (second - window.second >= BUCKETS) windows.delete(key);
  }

  return {
    hit(key) {
      const second = Math.floor(clock.now().getTime() / 1000);
      sweep(second);
      let window = windows.get(key);
      if (!window) {
        window = { counts: new Uint32Array(BUCKETS), second, total: 0 };
        windows.set(key, window);
      }
      slide(window, second);
      const allowed = window.total < limitPerMinute;
      if (allowed) {
        window.counts[window.second % BUCKETS]!++;
        window.total++;
      }
      return {
        allowed,
        limit: limitPerMinute,
        remaining: Math.max(0, limitPerMinute - window.total),
        resetAt: nextRelease(window),
      };
    },
    trackedKeys: () => windows.size,
  };
}
