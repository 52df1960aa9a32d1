import { describe, expect, it } from "vitest";
import { manualClock } from "../../../test/helpers/app.ts";
import { createRateLimiter } from "./rate-limit.ts";

describe("rate limiter memory", () => {
  it("drops a key once its whole window has passed, so memory follows the keys active in the last minute", () => {
    const clock = manualClock();
    const limiter = createRateLimiter(10, clock);
    for (let i = 0; i < 1000; i++) limiter.hit(`ip:10.0.${i >> 8}.${i & 255}`);
    expect(limiter.trackedKeys()).toBe(1000);
    clock.advance(30_000);
    limiter.hit("token:1");
    expect(limiter.trackedKeys()).toBe(1001); // nothing is idle for a whole window yet
    clock.advance(31_000);
    limiter.hit("token:1");
    expect(limiter.trackedKeys()).toBe(1); // the 1000 addresses were idle for 61 s
  });

  it("a key that comes back after its window passed starts with the whole budget", () => {
    const clock = manualClock();
    const limiter = createRateLimiter(2, clock);
    limiter.hit("k");
    limiter.hit("k");
    expect(limiter.hit("k").allowed).toBe(false);
    clock.advance(10 * 60_000);
    expect(limiter.hit("k")).toMatchObject({ allowed: true, remaining: 1 });
  });
});
