import { describe, expect, it } from "vitest";
import { PendingSignIns } from "./pending.ts";

const entry = (state: string, expiresAt: number) => ({
  state,
  nonce: `n-${state}`,
  codeVerifier: `v-${state}`,
  next: undefined,
  expiresAt,
});

describe("pending sign-ins", () => {
  it("are used once, and not after they expire", () => {
    const store = new PendingSignIns();
    store.add(entry("a", 1_000), 0);
    store.add(entry("b", 1_000), 0);
    expect(store.take("a", 500)?.nonce).toBe("n-a");
    expect(store.take("a", 500)).toBeUndefined();
    expect(store.take("b", 1_000)).toBeUndefined();
  });

  it("stay within their bound however many are started: the oldest goes first", () => {
    const store = new PendingSignIns(3);
    for (const s of ["a", "b", "c", "d", "e"]) store.add(entry(s, 10_000), 0);
    expect(store.size).toBe(3);
    expect(store.take("a", 1)).toBeUndefined();
    expect(store.take("b", 1)).toBeUndefined();
    expect(store.take("e", 1)?.state).toBe("e");
  });

  it("drop expired ones when a new one starts", () => {
    const store = new PendingSignIns(3);
    store.add(entry("old", 100), 0);
    store.add(entry("new", 10_000), 200);
    expect(store.size).toBe(1);
  });
});
