import { mulberry32 } from "../random.ts";
/**
 * Example values are fake but must be identical in every build, so they come from a generator seeded by the
 * field's name: the same field gets the same example wherever it appears, and nothing depends on the clock.
 */
export type Seeded = {
  /** A whole number in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
};

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32 over the hash of the seed text. */
export function seeded(seed: string): Seeded {
  const next = mulberry32(hash(seed));
  return {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}
