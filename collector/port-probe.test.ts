import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectGate } from "./port-probe.ts";

/** A scan's connection bound, on vitest's fake timers: when each slot opens, and that none opens past the total. */
describe("connectGate", () => {
  beforeEach(() => void vi.useFakeTimers({ now: new Date("2026-06-01T12:00:00Z") }));
  afterEach(() => void vi.useRealTimers());

  it("spaces connections evenly at perSecond and refuses past total", async () => {
    const gate = connectGate({ perSecond: 4, total: 5 });
    const opened: number[] = [];
    const start = Date.now();
    const answers = Array.from({ length: 6 }, () =>
      gate.take().then((ok) => {
        if (ok) opened.push(Date.now() - start);
        return ok;
      }),
    );
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await Promise.all(answers)).toEqual([true, true, true, true, true, false]);
    expect(opened).toEqual([0, 250, 500, 750, 1000]);
    expect(gate.used).toBe(5);
    expect(await gate.take()).toBe(false);
  });
});
