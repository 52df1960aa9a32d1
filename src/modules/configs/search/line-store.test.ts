import { describe, expect, it } from "vitest";
import {
  clearLineStore,
  currentLineStore,
  lineStoreSettled,
  LineStore,
  RunInterner,
  whileSearching,
} from "./line-store.ts";
import { LineMarks } from "./line-marks.ts";
import { applyLineDelta, RunText } from "../storage/line-runs.ts";
import { encodeLineDelta } from "../storage/blob-delta.ts";
import { eventLoopTurns } from "../../../../test/helpers/until.ts";

const textOf = (store: LineStore, ids: Uint32Array) => Array.from(ids, (id) => store.line(id));

describe("the line store", () => {
  it("gives each distinct line one id, across chunks, and reads every line back", () => {
    const store = new LineStore(1e9);
    const lines = Array.from({ length: 1300 }, (_, i) => `line ${i % 1000}`);
    const ids = lines.map((l) => store.intern(l));
    store.seal();
    expect(store.lineCount).toBe(1000);
    expect(store.chunks.length).toBeGreaterThan(1);
    expect(ids.slice(1000)).toEqual(ids.slice(0, 300));
    expect(ids.map((id) => store.line(id))).toEqual(lines);
    // Keyed again by their chunk's text when sealed: still found.
    expect(store.intern("line 999")).toBe(ids[999]);
    expect(store.intern("")).toBe(1000);
    expect(store.line(1000)).toBe("");
  });

  it("numbers lines as search does: no line after a final newline, an empty text is one empty line", () => {
    const store = new LineStore(1e9);
    const interner = new RunInterner(store);
    const lines = (text: string) => textOf(store, interner.idsOf(RunText.of(text)));
    expect(lines("a\nb\n")).toEqual(["a", "b"]);
    expect(lines("a\nb")).toEqual(["a", "b"]);
    expect(lines("a\n\nb\n\n")).toEqual(["a", "", "b", ""]);
    expect(lines("")).toEqual([""]);
    expect(lines("\n")).toEqual([""]);
  });

  it("interns a version rebuilt from a delta through its base's lines, with the same ids", () => {
    const store = new LineStore(1e9);
    const interner = new RunInterner(store);
    const newer = Array.from({ length: 50 }, (_, i) => `interface Gi0/${i}`).join("\n") + "\n";
    const older = newer.replace("interface Gi0/7\n", "interface Gi0/7\n shutdown\n");
    const base = RunText.of(newer);
    const baseIds = interner.idsOf(base);
    const { text } = applyLineDelta(encodeLineDelta(older, newer), base);
    const ids = interner.idsOf(text);
    expect(textOf(store, ids).join("\n") + "\n").toBe(older);
    expect(store.lineCount).toBe(51);
    expect(ids[0]).toBe(baseIds[0]);
  });

  it("keeps versions within its budget, least recently used out first", () => {
    const store = new LineStore(2000);
    const ids = new Uint32Array(100); // 400 bytes and bookkeeping each
    store.keep("a", ids);
    store.keep("b", ids);
    store.keep("c", ids);
    expect(store.version("a")).toBe(ids); // a is now the most recently used
    store.keep("d", ids);
    store.keep("e", ids);
    expect(store.bytes).toBeLessThanOrEqual(2000);
    expect(store.version("b")).toBeUndefined();
    expect(store.version("a")).toBe(ids);
    expect(store.version("e")).toBe(ids);
  });

  it("adds texts read in the background, once no search runs", async () => {
    clearLineStore();
    const store = currentLineStore();
    let finish!: () => void;
    const search = whileSearching(() => new Promise<void>((resolve) => (finish = resolve)));
    store.later("h1", RunText.of("interface Gi0/1\n shutdown\n"));
    await eventLoopTurns();
    expect(store.version("h1")).toBeUndefined();
    finish();
    await search;
    await lineStoreSettled();
    expect(textOf(store, store.version("h1")!)).toEqual(["interface Gi0/1", " shutdown"]);
    clearLineStore();
  });

  it("is replaced whole once its lines fill half its budget", () => {
    clearLineStore();
    const store = currentLineStore();
    expect(currentLineStore()).toBe(store);
    const long = "x".repeat(1 << 20);
    for (let i = 0; !store.full; i++) store.intern(`${i} ${long}`);
    const next = currentLineStore();
    expect(next).not.toBe(store);
    expect(next.lineCount).toBe(0);
    clearLineStore();
  });
});

describe("line marks", () => {
  it("marks which distinct lines match which terms, testing only lines that hold an anchor", () => {
    const store = new LineStore(1e9);
    const interner = new RunInterner(store);
    const text = Array.from({ length: 2000 }, (_, i) =>
      i % 300 === 0 ? `snmp-server community c${i} RO` : i % 7 === 0 ? `logging host 10.0.0.${i % 256}` : `line ${i}`,
    ).join("\n");
    const ids = interner.idsOf(RunText.of(text));
    store.seal();
    const tested: string[] = [];
    const spy = (re: RegExp) => ({ test: (line: string) => (tested.push(line), re.test(line)) });
    const terms = [
      { key: "community", term: { test: spy(/community c\d*00 /), anchors: ["community"] } },
      { key: "logging", term: { test: spy(/logging host 10\.0\.0\.1\d\d$/i), anchors: [/LOGGING host/gi] } },
    ];
    const marks = new LineMarks(store, terms);
    const expected = textOf(store, ids).map(
      (line) => (/community c\d*00 /.test(line) ? 1 : 0) | (/logging host 10\.0\.0\.1\d\d$/.test(line) ? 2 : 0),
    );
    expect(Array.from(ids, (id) => marks.of(id))).toEqual(expected);
    expect(tested.every((line) => line.includes("community") || line.includes("logging host"))).toBe(true);
    expect(marks.matches(ids, "all")).toBe(true);
    expect(marks.matches(ids.subarray(1, 7), "any")).toBe(false);
    // The same terms again (the next page of a search): the store knows their lines, nothing is tested again.
    const count = tested.length;
    const again = new LineMarks(store, terms.slice().reverse());
    expect(Array.from(ids, (id) => again.of(id))).toEqual(expected.map((bits) => ((bits & 1) << 1) | (bits >> 1)));
    expect(tested.length).toBe(count);
  });
});
