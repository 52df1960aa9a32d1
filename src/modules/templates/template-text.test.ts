import { describe, expect, it } from "vitest";
import { removeLines } from "./template-text.ts";

const text = ["hostname r1", "! Last change at 10:00", "interface Gi0/1", " description uplink", "!", "ntp clock-period 123", "aaa", "end"].join("\n");

describe("removeLines", () => {
  it("drops each line any line filter matches, anywhere in the line unless anchored", () => {
    expect(removeLines(text, ["^! Last change", "clock-period"])).toBe(["hostname r1", "interface Gi0/1", " description uplink", "!", "aaa", "end"].join("\n"));
    expect(removeLines(text, ["^clock-period"])).toBe(text);
  });

  it("drops a block from a line matching `from` through the first line matching `to`", () => {
    expect(removeLines(text, [{ from: "^interface ", to: "^!$" }])).toBe(["hostname r1", "! Last change at 10:00", "ntp clock-period 123", "aaa", "end"].join("\n"));
    // No `to` after it: the block runs to the end.
    expect(removeLines(text, [{ from: "^ntp ", to: "^never$" }])).toBe(["hostname r1", "! Last change at 10:00", "interface Gi0/1", " description uplink", "!"].join("\n"));
  });

  it("lets the first filter in the list that matches a line decide, line filters around a block included", () => {
    // The block comes first, so the interface line opens it although a line filter also matches that line.
    expect(removeLines(text, ["^hostname", { from: "^interface ", to: "^!$" }, "^interface "])).toBe(["! Last change at 10:00", "ntp clock-period 123", "aaa", "end"].join("\n"));
    // The line filter comes first: the interface line alone goes, and no block opens.
    expect(removeLines(text, ["^hostname", "^interface ", { from: "^interface ", to: "^!$" }])).toBe(["! Last change at 10:00", " description uplink", "!", "ntp clock-period 123", "aaa", "end"].join("\n"));
  });

  it("keeps the meaning of filters with back-references or named groups beside others", () => {
    // (\w)\1 is a doubled letter at the start: only "aaa" has one. After "^(e)nd" its group would be the second.
    expect(removeLines(text, ["^(e)nd$", "^(\\w)\\1", "^(?<bang>!)\\k<bang>"])).toBe(["hostname r1", "! Last change at 10:00", "interface Gi0/1", " description uplink", "!", "ntp clock-period 123"].join("\n"));
    expect(removeLines(text, ["^(?<x>h)", "^(?<x>a)"])).toBe(["! Last change at 10:00", "interface Gi0/1", " description uplink", "!", "ntp clock-period 123", "end"].join("\n"));
  });
});
