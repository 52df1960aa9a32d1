import { describe, expect, it } from "vitest";
import { canonicalTimeZone, cronProblem, cronText, dueSlots, nextRuns } from "./cron.ts";

const MINUTE = 60_000;
const at = (iso: string) => new Date(iso);

describe("due slots", () => {
  it("counts the slots in (after, now], now included, and names the latest", () => {
    const due = dueSlots(
      { cron: "*/15 * * * *", timezone: "UTC" },
      at("2026-06-01T12:00:00Z"),
      at("2026-06-01T13:00:00Z"),
    );
    expect(due).toEqual({ count: 4, latest: at("2026-06-01T13:00:00Z") });
    expect(
      dueSlots({ cron: "*/15 * * * *", timezone: "UTC" }, at("2026-06-01T12:00:00Z"), at("2026-06-01T12:14:59Z")),
    ).toBeUndefined();
  });

  it("stops counting at the cap but still finds the latest slot", () => {
    const after = at("2026-06-01T00:00:30Z");
    const now = new Date(after.getTime() + 5000 * MINUTE);
    const due = dueSlots({ cron: "* * * * *", timezone: "UTC" }, after, now, 1000)!;
    expect(due.count).toBe(1000);
    expect(due.latest.getTime()).toBe(Math.floor(now.getTime() / MINUTE) * MINUTE);
  });

  it("reads the expression in the task's time zone", () => {
    // 09:00 in New York in June is 13:00 UTC (EDT, UTC-4); in January 14:00 UTC (EST, UTC-5).
    expect(nextRuns({ cron: "0 9 * * *", timezone: "America/New_York" }, at("2026-06-01T00:00:00Z"), 1)).toEqual([
      at("2026-06-01T13:00:00Z"),
    ]);
    expect(nextRuns({ cron: "0 9 * * *", timezone: "America/New_York" }, at("2026-01-01T00:00:00Z"), 1)).toEqual([
      at("2026-01-01T14:00:00Z"),
    ]);
  });
});

describe("cron checks", () => {
  it("joins rConfig's array form and tidies whitespace", () => {
    expect(cronText(["0", 5, "*", "*", "1-5"])).toBe("0 5 * * 1-5");
    expect(cronText("  0   5 * *\t* ")).toBe("0 5 * * *");
  });

  it("accepts valid expressions and names the wrong field of invalid ones", () => {
    expect(cronProblem("0 5 * * 1-5")).toBeUndefined();
    expect(cronProblem("0 5 L * *")).toBeUndefined();
    expect(cronProblem("0 5 * * 1-9")).toMatch(/^has an invalid day-of-week field '1-9'/);
    expect(cronProblem("0 5 * JANUARY *")).toMatch(/^has an invalid month field 'JANUARY'/);
  });

  it("knows IANA time zone names in any case", () => {
    expect(canonicalTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("america/new_york")).toBe("America/New_York");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Berlin")).toBeUndefined();
  });
});
