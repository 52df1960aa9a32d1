import { describe, expect, it } from "vitest";
import { diffTexts } from "../../../modules/configs/history/config-diff.ts";
import { diffRows, wordDiff, type Row } from "./diff-rows.ts";

const marked = (segments: { text: string; changed: boolean }[]) =>
  segments.map((s) => (s.changed ? `[${s.text}]` : s.text)).join("");

describe("wordDiff", () => {
  it("marks only the words that differ inside a changed line", () => {
    const words = wordDiff(" ip address 10.0.0.1 255.255.255.0", " ip address 10.0.0.2 255.255.255.0");
    expect(marked(words.old)).toBe(" ip address 10.0.0.[1] 255.255.255.0");
    expect(marked(words.new)).toBe(" ip address 10.0.0.[2] 255.255.255.0");
  });
});

describe("diffRows", () => {
  const old = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  const changed = [...old];
  changed[4] = "line five";
  changed.splice(20, 1);
  const rows = diffRows(diffTexts(old.join("\n") + "\n", changed.join("\n") + "\n", { context: 2 }).hunks, 30, 29);
  const folds = rows.filter((r): r is Extract<Row, { kind: "fold" }> => r.kind === "fold");

  it("pairs a removed line with the added line that replaced it, and leaves a lone removal alone", () => {
    const changes = rows.filter((r) => r.kind === "change");
    expect(changes).toHaveLength(2);
    expect(changes[0]).toMatchObject({ old: { line: 5 }, new: { line: 5 } });
    expect(marked(changes[0]!.kind === "change" ? changes[0]!.new!.segments : [])).toBe("line [five]");
    expect(changes[1]).toMatchObject({ old: { line: 21 }, new: null });
  });

  it("folds the unchanged stretches before, between and after the hunks, numbering both sides", () => {
    expect(folds.map((f) => [f.oldFrom, f.oldTo, f.newFrom, f.newTo])).toEqual([
      [1, 2, 1, 2],
      [8, 18, 8, 18],
      [24, 30, 23, 29],
    ]);
  });
});
