import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../kernel/random.ts";
import { decodeLineDelta, encodeLineDelta } from "./blob-delta.ts";
import { applyLineDelta, RunText } from "./line-runs.ts";

/** The script format as blob-delta.ts describes it, applied line by line: what the decoder must agree with. */
function referenceDecode(script: string, base: string): string {
  const baseLines = base.split("\n");
  const ops = script.split("\n");
  const lines: string[] = [];
  for (let k = 0; k < ops.length; k++) {
    const op = ops[k]!;
    if (op.startsWith("=")) {
      const [start, n] = op.slice(1).split(" ").map(Number) as [number, number];
      lines.push(...baseLines.slice(start, start + n));
    } else {
      const n = Number(op.slice(1));
      lines.push(...ops.slice(k + 1, k + 1 + n));
      k += n;
    }
  }
  return lines.join("\n");
}

describe("line deltas", () => {
  const rnd = mulberry32(5);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const vocabulary = [
    "interface Gi0/1",
    " description uplink",
    " shutdown",
    "!",
    "",
    " ip address 10.0.0.1 255.255.255.0",
    "end",
    "=3 4",
    "+2",
    "ünïcode ✓",
  ];
  const text = () =>
    Array.from({ length: Math.floor(rnd() * 12) }, () => pick(vocabulary)).join("\n") + pick(["", "\n", "\n\n"]);
  const edit = (t: string) => {
    const lines = t.split("\n");
    for (let e = Math.floor(rnd() * 4); e > 0; e--) {
      const at = Math.floor(rnd() * (lines.length + 1));
      if (rnd() < 0.5) lines.splice(at, 1);
      else lines.splice(at, 0, pick(vocabulary));
    }
    return lines.join("\n");
  };

  it("rebuilds every text byte for byte from its base, as the line-by-line reading of the script does", () => {
    for (let i = 0; i < 2000; i++) {
      const base = text();
      const target = rnd() < 0.8 ? edit(base) : text();
      const script = encodeLineDelta(target, base);
      expect(decodeLineDelta(script, base)).toBe(target);
      expect(referenceDecode(script, base)).toBe(target);
    }
    for (const [target, base] of [
      ["", ""],
      ["", "a\nb"],
      ["a\nb", ""],
      ["\n", "\n"],
      ["x", "x\n"],
    ] as const) {
      expect(decodeLineDelta(encodeLineDelta(target, base), base)).toBe(target);
    }
  });

  it("rebuilds a chain of versions as runs of lines, each equal to its text and its length counted without joining", () => {
    for (let i = 0; i < 300; i++) {
      const versions = [text()];
      for (let v = 1; v < 6; v++) versions.push(edit(versions[v - 1]!));
      // Stored newest first: the newest whole, each older one a delta against the one after it.
      let runs = RunText.of(versions.at(-1)!);
      for (let v = versions.length - 2; v >= 0; v--) {
        const { text: older, own } = applyLineDelta(encodeLineDelta(versions[v]!, versions[v + 1]!), runs);
        expect(older.toString()).toBe(versions[v]);
        expect(older.length).toBe(versions[v]!.length);
        expect(older.lineCount).toBe(versions[v]!.split("\n").length);
        // Its own lines are the lines the newer text lacks, or repeats fewer times.
        for (const line of own.toString() ? own.toString().split("\n") : [])
          expect(versions[v]!.split("\n")).toContain(line);
        runs = older;
      }
    }
  });

  it("refuses scripts that do not fit their base or are cut short", () => {
    expect(() => decodeLineDelta("=0 3", "a\nb")).toThrow(/copies lines its base lacks/);
    expect(() => decodeLineDelta("=-1 1", "a\nb")).toThrow(/copies lines its base lacks/);
    expect(() => decodeLineDelta("+2\nonly one", "a")).toThrow(/cut short/);
    expect(() => decodeLineDelta("+1", "a")).toThrow(/cut short/);
    expect(() => decodeLineDelta("=0 1\n", "a")).toThrow(/unknown instruction/);
    expect(() => decodeLineDelta("?", "a")).toThrow(/unknown instruction/);
  });

  it("encodes a run of 200,000 new lines (a whole configuration replaced) without overflowing the call stack", () => {
    const base = Array.from({ length: 10 }, (_, i) => `old ${i}`).join("\n");
    const text = Array.from({ length: 200_000 }, (_, i) => `interface Ethernet${i}`).join("\n");
    const script = encodeLineDelta(text, base);
    expect(script.startsWith("+200000\ninterface Ethernet0\n")).toBe(true);
    expect(decodeLineDelta(script, base)).toBe(text);
  });
});
