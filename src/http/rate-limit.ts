import type { Clock } from "../clock.ts";

export type RateDecision = { allowed: boolean; limit: number; remaining: number; resetAt: number };
export type RateLimiter = { hit(key: string): RateDecision };

/**
 * Fixed one-minute windows per key, in process memory. Each API process enforces the limit on its own, so N
 * replicas behind a balancer allow up to N times the limit; that trade keeps the hot path free of a database
 * write per request.
 */
export function createRateLimiter(limitPerMinute: number, clock: Clock): RateLimiter {
  let windowStart = 0;
  let counts = new Map<string, number>();
  return {
    hit(key) {
      const now = clock.now().getTime();
      const start = now - (now % 60_000);
      if (start !== windowStart) {
        windowStart = start;
        counts = new Map();
      }
      const used = (counts.get(key) ?? 0) + 1;
      counts.set(key, used);
      return {
        allowed: used <= limitPerMinute,
        limit: limitPerMinute,
        remaining: Math.max(0, limitPerMinute - used),
        resetAt: Math.ceil((start + 60_000) / 1000),
      };
    },
  };
}
