import { describe, expect, it } from "vitest";
import { SAME_STOP_WITHIN_MS, stopSignalMeaning } from "./stop-signal.ts";

describe("stopSignalMeaning", () => {
  it("starts a stop, takes a copy within the window as the same one, and forces on a later signal", () => {
    expect(stopSignalMeaning(undefined, 5_000)).toBe("first");
    expect(stopSignalMeaning(5_000, 5_000)).toBe("same");
    expect(stopSignalMeaning(5_000, 5_000 + SAME_STOP_WITHIN_MS - 1)).toBe("same");
    expect(stopSignalMeaning(5_000, 5_000 + SAME_STOP_WITHIN_MS)).toBe("force");
  });
});
