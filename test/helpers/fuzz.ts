/** What the fuzz tests share: a seeded choice (the same seed, the same requests) and a bound on each answer's wait. */
import { mulberry32 } from "../../src/kernel/random.ts";

export function seededChoice(seed: number) {
  const rnd = mulberry32(seed);
  return { rnd, pick: <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]! };
}

/** The answer, or an error naming the wait when none comes within `ms` (a hang fails the test instead of timing it out). */
export function answerWithin<T>(answer: Promise<T>, ms = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)),
  );
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}
