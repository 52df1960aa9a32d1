import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "diff";
import { describe, expect, it } from "vitest";
import { diffTexts, formatUnified, unifiedDiff } from "./config-diff.ts";
import { matchLines } from "./line-diff.ts";

/** A deterministic pseudo-random source, so a failure reproduces. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s / 2 ** 32;
  };
}

/** Config-like lines: unique interface names and descriptions among many repeated lines (" no shutdown", "!"). */
function configLines(random: () => number, n: number): string[] {
  const lines: string[] = [];
  for (let i = 0; lines.length < n; i++) {
    lines.push(
      `interface GigabitEthernet1/0/${i}`,
      ` description port ${Math.floor(random() * 50)}`,
      " switchport mode access",
    );
    if (random() < 0.5) lines.push(" shutdown");
    lines.push(" no shutdown", "!");
  }
  return lines.slice(0, n);
}

/** Random inserts, deletes, replacements and a moved block. */
function edit(random: () => number, lines: string[], edits: number): string[] {
  const out = lines.slice();
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (out.length + 1));
    const kind = random();
    if (kind < 0.3) out.splice(at, 0, ...(random() < 0.5 ? [" no shutdown"] : [`new line ${e}`, "!"]));
    else if (kind < 0.6) out.splice(at, 1 + Math.floor(random() * 3));
    else if (kind < 0.9) out[Math.min(at, out.length - 1)] = random() < 0.5 ? "!" : `changed ${e}`;
    else {
      const block = out.splice(at, 5);
      out.splice(Math.floor(random() * (out.length + 1)), 0, ...block);
    }
  }
  return out;
}

const text = (lines: string[]) => (lines.length ? lines.join("\n") + "\n" : "");

function expectValidMatch(a: string[], b: string[], match: Int32Array) {
  let last = -1;
  match.forEach((j, i) => {
    if (j === -1) return;
    expect(j).toBeGreaterThan(last);
    expect(b[j]).toBe(a[i]);
    last = j;
  });
}

describe("matching lines", () => {
  it("matches only equal lines, in order, on random edits of config-like texts", () => {
    const random = rng(1);
    for (let round = 0; round < 40; round++) {
      const a = configLines(random, 20 + Math.floor(random() * 200));
      const b = edit(random, a, 1 + Math.floor(random() * 10));
      expectValidMatch(a, b, matchLines(a, b));
    }
  });

  it("keeps every line an unchanged stretch shares (no spurious edits around a single change)", () => {
    const a = configLines(rng(2), 5000);
    const b = a.slice();
    b[2500] = "interface Loopback0";
    const match = matchLines(a, b);
    expect([...match].filter((j) => j === -1)).toHaveLength(1);
    expect(match[2500]).toBe(-1);
  });

  it("finds the shortest edit in stretches without unique lines (Myers)", () => {
    // Only repeated lines, so no anchor helps: the fewest edits turn "! x ! x !" into "! ! x !".
    const a = ["!", " x", "!", " x", "!"];
    const b = ["!", "!", " x", "!"];
    const match = matchLines(a, b);
    expectValidMatch(a, b, match);
    expect([...match].filter((j) => j >= 0)).toHaveLength(4);
  });

  it("still gives a correct diff when it runs out of effort", () => {
    const random = rng(3);
    const a = configLines(random, 300);
    const b = edit(random, a, 20);
    const match = matchLines(a, b, 10);
    expectValidMatch(a, b, match);
    const diff = unifiedDiff(text(a), text(b), "a", "b");
    expect(applyPatch(text(a), diff.text)).toBe(text(b));
  });
});

describe("diffs of texts", () => {
  const old = text(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
  const now = text(["a", "b", "c", "X", "e", "f", "g", "h", "i", "j", "k"]);

  it("writes hunks with diff(1)'s ranges, merging changes closer than twice the context", () => {
    expect(unifiedDiff(old, now, "old", "new", { context: 1 }).text).toBe(
      ["--- old", "+++ new", "@@ -3,3 +3,3 @@", " c", "-d", "+X", " e", "@@ -10,1 +10,2 @@", " j", "+k", ""].join("\n"),
    );
    expect(unifiedDiff(old, now, "old", "new", { context: 0 }).text).toBe(
      ["--- old", "+++ new", "@@ -4,1 +4,1 @@", "-d", "+X", "@@ -10,0 +11,1 @@", "+k", ""].join("\n"),
    );
    const merged = diffTexts(old, now, { context: 3 });
    expect(merged.hunks).toHaveLength(1);
    expect(merged.hunks[0]).toMatchObject({ old_start: 1, old_lines: 10, new_start: 1, new_lines: 11 });
    expect(merged).toMatchObject({ added: 2, removed: 1 });
  });

  it("numbers each line on both sides for a side-by-side view", () => {
    const [hunk] = diffTexts(old, now, { context: 1 }).hunks;
    expect(hunk!.lines).toEqual([
      { kind: "context", old_line: 3, new_line: 3, text: "c" },
      { kind: "removed", old_line: 4, new_line: null, text: "d" },
      { kind: "added", old_line: null, new_line: 4, text: "X" },
      { kind: "context", old_line: 5, new_line: 5, text: "e" },
    ]);
  });

  it("is empty for equal texts, and all additions from nothing", () => {
    expect(unifiedDiff(old, old, "a", "b")).toMatchObject({ text: "", added: 0, removed: 0 });
    const fresh = unifiedDiff("", "x\ny\n", "a", "b");
    expect(fresh.text).toBe("--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
  });

  it("produces patches that another implementation applies exactly (jsdiff), for any context", () => {
    const random = rng(4);
    for (let round = 0; round < 60; round++) {
      const a = configLines(random, 10 + Math.floor(random() * 300));
      const b = edit(random, a, 1 + Math.floor(random() * 15));
      const context = [0, 1, 3, 10][round % 4]!;
      const diff = unifiedDiff(text(a), text(b), "a", "b", { context });
      expect(applyPatch(text(a), diff.text)).toBe(text(b));
      const removed = diff.diff.hunks.flatMap((h) => h.lines).filter((l) => l.kind === "removed").length;
      expect(diff.removed).toBe(removed);
    }
  });

  it("produces patches GNU patch applies, including texts without a final newline", () => {
    const dir = mkdtempSync(join(tmpdir(), "netkeep-diff-"));
    try {
      const random = rng(5);
      const cases: [string, string][] = [
        [text(configLines(random, 400)), ""],
        ["hostname a\nend", "hostname b\nend"],
        ["hostname a\nend\n", "hostname a\nend"],
        ["hostname a\nend", "hostname a\nend\n"],
      ];
      cases[0]![1] = text(edit(random, cases[0]![0].trimEnd().split("\n"), 12));
      for (const [a, b] of cases) {
        writeFileSync(join(dir, "old.txt"), a);
        writeFileSync(join(dir, "change.diff"), unifiedDiff(a, b, "old.txt", "new.txt").text);
        execFileSync("patch", ["-s", "-o", join(dir, "out.txt"), join(dir, "old.txt"), join(dir, "change.diff")]);
        expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe(b);
        expect(applyPatch(a, unifiedDiff(a, b, "a", "b").text)).toBe(b);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ignores whitespace and case on request, showing the old form of lines that differ only so", () => {
    const a = "interface  Gi0/1 \n description Uplink\n shutdown\n";
    const b = "interface Gi0/1\n Description UPLINK\n no shutdown\n";
    expect(diffTexts(a, b).removed).toBe(3);
    const loose = diffTexts(a, b, { ignoreWhitespace: true, ignoreCase: true, context: 5 });
    expect(loose).toMatchObject({ added: 1, removed: 1 });
    expect(loose.hunks[0]!.lines[0]).toEqual({
      kind: "context",
      old_line: 1,
      new_line: 1,
      text: "interface Gi0/1",
      old_text: "interface  Gi0/1 ",
    });
    const removedLines = (d: ReturnType<typeof diffTexts>) =>
      d.hunks
        .flatMap((h) => h.lines)
        .filter((l) => l.kind === "removed")
        .map((l) => l.old_line);
    expect(removedLines(diffTexts(a, b, { ignoreWhitespace: true }))).toEqual([2, 3]);
    expect(removedLines(diffTexts(a, b, { ignoreCase: true }))).toEqual([1, 3]);
  });

  it("leaves excluded lines out while numbering lines as stored", () => {
    const a = "! Last change at 10:00\nhostname r1\nntp clock-period 1\ninterface Gi0/1\n shutdown\n";
    const b = "! Last change at 11:00\nhostname r1\nntp clock-period 2\ninterface Gi0/1\n no shutdown\n";
    const exclude = (l: string) => /^! Last change|^ntp clock-period/.test(l);
    expect(diffTexts(a, b).removed).toBe(3);
    const diff = diffTexts(a, b, { exclude, context: 1 });
    expect(diff).toMatchObject({ added: 1, removed: 1 });
    expect(diff.hunks).toEqual([
      {
        old_start: 4,
        old_lines: 2,
        new_start: 4,
        new_lines: 2,
        lines: [
          { kind: "context", old_line: 4, new_line: 4, text: "interface Gi0/1" },
          { kind: "removed", old_line: 5, new_line: null, text: " shutdown" },
          { kind: "added", old_line: null, new_line: 5, text: " no shutdown" },
        ],
      },
    ]);
    expect(formatUnified(diffTexts(a, a.replace("10:00", "12:00"), { exclude }), "a", "b")).toBe("");
  });
});
