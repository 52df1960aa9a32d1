import type { Clock } from "../../kernel/clock.ts";

/** Failures allowed per username and address before logins from there wait. */
export const FREE_FAILURES = 5;
const FIRST_LOCK_MS = 30_000;
const MAX_LOCK_MS = 15 * 60_000;
/** A key untouched this long starts over; also what the sweep drops. */
const FORGET_AFTER_MS = 60 * 60_000;
const SWEEP_ABOVE = 10_000;

export type LoginThrottle = {
  /** Seconds to wait before another attempt is heard, or 0 when one may be made now. */
  retryAfterSeconds(username: string, ip: string): number;
  /**
   * Starts an attempt: the seconds to wait when it may not be made (nothing counted), or 0 when it may, and then
   * it counts as a failure until `succeed` says otherwise. Counting before the password is checked, in the same
   * step as the check of the wait, is what stops attempts sent together from all slipping past a lock.
   */
  begin(username: string, ip: string): number;
  succeed(username: string, ip: string): void;
};

type Entry = { failures: number; lockedUntil: number; lastFailure: number };

/**
 * Brute-force brake for the login form, per (username, address): five free failures, then a lock that doubles
 * with each further failure, from 30 seconds up to 15 minutes. Kept in process memory like the API rate
 * limiter: N replicas give an attacker N times the attempts, still far too few to guess a password.
 */
export function createLoginThrottle(clock: Clock): LoginThrottle {
  const entries = new Map<string, Entry>();
  const keyOf = (username: string, ip: string) => `${username.trim().toLowerCase()}\n${ip}`;

  const live = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key);
    if (entry && now - entry.lastFailure > FORGET_AFTER_MS && entry.lockedUntil <= now) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };

  const sweep = (now: number) => {
    if (entries.size <= SWEEP_ABOVE) return;
    for (const key of [...entries.keys()]) live(key, now);
  };

  return {
    retryAfterSeconds(username, ip) {
      const now = clock.now().getTime();
      const entry = live(keyOf(username, ip), now);
      return entry && entry.lockedUntil > now ? Math.ceil((entry.lockedUntil - now) / 1000) : 0;
    },
    begin(username, ip) {
      const now = clock.now().getTime();
      sweep(now);
      const key = keyOf(username, ip);
      const entry = live(key, now) ?? { failures: 0, lockedUntil: 0, lastFailure: now };
      if (entry.lockedUntil > now) return Math.ceil((entry.lockedUntil - now) / 1000);
      entry.failures += 1;
      entry.lastFailure = now;
      const over = entry.failures - FREE_FAILURES;
      if (over >= 0) entry.lockedUntil = now + Math.min(MAX_LOCK_MS, FIRST_LOCK_MS * 2 ** over);
      entries.set(key, entry);
      return 0;
    },
    succeed(username, ip) {
      entries.delete(keyOf(username, ip));
    },
  };
}
