/**
 * Values kept in memory up to a budget of characters, least recently used out first. Search keeps the texts it
 * read here by blob hash: a hash names one text for good, so an entry is never stale, whatever happens to the
 * stored blob (a whole text later becomes a delta, a delta is re-encoded against another base).
 */
export class TextCache<V> {
  private readonly entries = new Map<string, { value: V; chars: number }>();
  private chars = 0;

  constructor(readonly budget: number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key); // re-inserted: a Map iterates oldest first, so the front is the least recently used
    this.entries.set(key, entry);
    return entry.value;
  }

  /** `chars`: what the value counts against the budget. A value larger than the whole budget is not kept. */
  set(key: string, value: V, chars: number): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.chars -= old.chars;
    }
    if (chars > this.budget) return;
    this.entries.set(key, { value, chars });
    this.chars += chars;
    for (const [oldest, entry] of this.entries) {
      if (this.chars <= this.budget) break;
      this.entries.delete(oldest);
      this.chars -= entry.chars;
    }
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }

  /** Characters held. */
  get size(): number {
    return this.chars;
  }
}
