import { mulberry32 } from "../../kernel/random.ts";
import { fnv1a } from "../../kernel/fnv1a.ts";

/**
 * Example values are fake but must be identical in every build, so they come from a generator seeded by the
 * field's name: the same field gets the same example wherever it appears, and nothing depends on the clock.
 */
export type Seeded = {
  /** A whole number in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
};

/** mulberry32 over the hash of the seed text. */
export function seeded(seed: string): Seeded {
  const next = mulberry32(fnv1a(seed));
  return {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}
