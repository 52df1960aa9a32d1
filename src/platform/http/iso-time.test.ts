import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../kernel/random.ts";
import { isoTime } from "./iso-time.ts";

describe("isoTime", () => {
  it("writes what Date.toISOString writes", () => {
    const next = mulberry32(7);
    const samples = [
      0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 253_402_300_799_999, -1, -86_400_001,
      253_402_300_800_000,
    ];
    for (let i = 0; i < 20_000; i++) samples.push(Math.floor(next() * 253_402_300_800_000));
    for (const ms of samples) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
