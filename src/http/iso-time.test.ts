import { describe, expect, it } from "vitest";
import { isoTime } from "./iso-time.ts";

describe("isoTime", () => {
  it("writes what Date.toISOString writes", () => {
    let seed = 7;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed);
    const samples = [0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 253_402_300_799_999, -1, -86_400_001, 253_402_300_800_000];
    for (let i = 0; i < 20_000; i++) samples.push((next() * 65_536 + (next() & 0xffff)) % 253_402_300_800_000);
    for (const ms of samples) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
