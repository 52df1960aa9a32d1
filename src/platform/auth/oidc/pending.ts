import type { PendingSignIn } from "./provider.ts";

/**
 * Sign-ins started and not yet finished, by state: each used once. Anyone can start one without an account, so the
 * store is bounded: past `limit` the oldest goes (its browser gets "no pending sign-in" and starts again).
 */
export class PendingSignIns {
  readonly #entries = new Map<string, PendingSignIn>();

  constructor(private readonly limit = 10_000) {}

  get size(): number {
    return this.#entries.size;
  }

  add(entry: PendingSignIn, now: number): void {
    for (const [key, e] of this.#entries) if (e.expiresAt <= now) this.#entries.delete(key);
    // A Map iterates in insertion order: the first key is the oldest.
    while (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(entry.state, entry);
  }

  /** The entry for `state`, removed (a second callback with it finds nothing); undefined once expired. */
  take(state: string, now: number): PendingSignIn | undefined {
    const entry = this.#entries.get(state);
    this.#entries.delete(state);
    return entry && entry.expiresAt > now ? entry : undefined;
  }
}
