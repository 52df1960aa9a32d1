import { describe, expect, it } from "vitest";
import { deviceOf } from "./run-download.ts";

describe("deviceOf", () => {
  it("turns every time column the wire carries as epoch ms back into a Date, and leaves other numbers alone", () => {
    const inventoryAt = new Date("2026-05-01T10:00:00Z");
    const lastSeenAt = new Date("2026-05-02T11:00:00Z");
    const device = deviceOf({
      id: 7,
      portOverride: 22,
      inventoryAt: inventoryAt.getTime(),
      lastSeenAt: lastSeenAt.getTime(),
    });
    expect(device.inventoryAt).toEqual(inventoryAt);
    expect(device.lastSeenAt).toEqual(lastSeenAt);
    expect(device.portOverride).toBe(22);
  });
});
