import { describe, expect, it } from "vitest";
import { slots } from "./slots.ts";

describe("slots", () => {
  it("runs at most its size at once, the rest in the order they came, and frees a slot when work fails", async () => {
    const run = slots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const work = (i: number) =>
      run(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        order.push(i);
        if (i === 1) throw new Error("failed");
        return i;
      });
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map(work));
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
  });
});
