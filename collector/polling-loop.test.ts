import { describe, expect, it } from "vitest";
import { createLogger } from "../src/kernel/logger.ts";
import { until } from "../test/helpers/until.ts";
import { startPollingLoop } from "./polling-loop.ts";

/** A pass the test releases by hand, recording how many run at once. */
function heldPasses() {
  const held: (() => void)[] = [];
  const state = { started: 0, running: 0, mostAtOnce: 0 };
  const pass = async () => {
    state.started++;
    state.running++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
    await new Promise<void>((r) => held.push(r));
    state.running--;
    return undefined;
  };
  return { state, pass, release: () => held.shift()?.() };
}

describe("the collector's polling loop", () => {
  it("runs one pass at a time, pauses the interval between passes, and wake() starts the next at once", async () => {
    const { state, pass, release } = heldPasses();
    // An interval no test waits out: only wake() can start a second pass.
    const loop = startPollingLoop({ logger: createLogger(() => {}), failureMessage: "x", intervalMs: 3_600_000, pass });
    try {
      await until("the first pass", () => state.started === 1);
      loop.wake();
      loop.wake();
      release();
      // Woken while the pass ran: no pause after it.
      await until("the second pass", () => state.started === 2);
      release();
      await until("the second pass to end", () => state.running === 0);
      expect(state.started, "paused for the interval").toBe(2);
      loop.wake();
      await until("the woken pass", () => state.started === 3);
      expect(state.mostAtOnce).toBe(1);
    } finally {
      const stopped = loop.stop();
      release();
      await stopped;
    }
  });

  it("goes on at once when a pass asks for no pause", async () => {
    let passes = 0;
    const loop = startPollingLoop({
      logger: createLogger(() => {}),
      failureMessage: "x",
      intervalMs: 3_600_000,
      pass: async () => (++passes < 5 ? 0 : undefined),
    });
    await until("five passes", () => passes === 5);
    await loop.stop();
    expect(passes).toBe(5);
  });

  it("logs a failed pass with its error and tries again after the interval", async () => {
    const lines: string[] = [];
    let passes = 0;
    const loop = startPollingLoop({
      logger: createLogger((l) => lines.push(l)),
      failureMessage: "the pass failed; retrying",
      intervalMs: 1,
      pass: async () => {
        if (++passes === 1) throw new Error("database is locked");
        return undefined;
      },
    });
    await until("a second pass", () => passes >= 2);
    await loop.stop();
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "the pass failed; retrying",
        error: expect.stringContaining("database is locked"),
      }),
    ]);
  });

  it("stop() ends the pause at once and resolves after the pass in hand", async () => {
    const { state, pass, release } = heldPasses();
    const loop = startPollingLoop({ logger: createLogger(() => {}), failureMessage: "x", intervalMs: 3_600_000, pass });
    await until("the first pass", () => state.started === 1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped, "waits for the pass in hand").toBe(false);
    release();
    await stopping;
    expect(state.started).toBe(1);
  });
});
