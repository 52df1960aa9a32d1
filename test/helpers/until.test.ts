import { describe, expect, it } from "vitest";
import { eventLoopTurns, until } from "./until.ts";

describe("until", () => {
  it("returns the first value the condition accepts, reading sync or async", async () => {
    let reads = 0;
    expect(
      await until(
        "the third read",
        () => ++reads,
        (n) => n === 3,
      ),
    ).toBe(3);
    expect(reads).toBe(3);
    let ready = false;
    setTimeout(() => (ready = true), 0);
    expect(await until("the flag", async () => ready)).toBe(true);
  });

  it("gives up after its tries, naming what it waited for and the last value read", async () => {
    let reads = 0;
    await expect(
      until(
        "a green light",
        () => `red ${++reads}`,
        (v) => v === "green",
        { tries: 4, everyMs: 1 },
      ),
    ).rejects.toThrow("waited for a green light: not after 4 tries; last read: red 4");
    expect(reads).toBe(4);
  });
});

describe("eventLoopTurns", () => {
  it("lets a timer already due run, and a later one not", async () => {
    let due = false;
    let later = false;
    setTimeout(() => (due = true), 0);
    const timer = setTimeout(() => (later = true), 60_000);
    await eventLoopTurns(1);
    clearTimeout(timer);
    expect([due, later]).toEqual([true, false]);
  });
});
