import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Spool } from "./spool.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), "netkeep-spool-"));
  dirs.push(d);
  return d;
};
// Random text does not compress: each result takes about its own size on disk.
const result = (n: number, size = 2000) => ({
  upload_key: `key-${n}-xxxxxxxx`,
  job_id: n,
  outcome: "collected" as const,
  outputs: [
    ["show run", Array.from({ length: size }, () => String.fromCharCode(33 + Math.floor(Math.random() * 90))).join("")],
  ] as [string, string][],
  duration_ms: 1,
});

describe("the remote collector's spool", () => {
  it("hands results back in the order they finished, and keeps them across a restart", () => {
    const dir = stateDir();
    const spool = new Spool(dir, 1_000_000, () => {});
    for (const n of [1, 2, 3]) spool.put(result(n));
    const again = new Spool(dir, 1_000_000, () => {});
    const seen: number[] = [];
    for (let next = again.peek(); next; next = again.peek()) {
      seen.push(next.upload!.job_id);
      next.remove();
    }
    expect(seen).toEqual([1, 2, 3]);
    // Numbering goes on after a restart: a new result sorts after any left.
    again.put(result(4));
    new Spool(dir, 1_000_000, () => {}).put(result(5));
    expect(new Spool(dir, 1_000_000, () => {}).peek()!.upload!.job_id).toBe(4);
  });

  it("drops the oldest results, saying which, once it holds more than its bound", () => {
    const dropped: number[] = [];
    const spool = new Spool(stateDir(), 5_000, (u) => dropped.push(u.job_id));
    for (const n of [1, 2, 3, 4, 5]) spool.put(result(n));
    expect(spool.bytes()).toBeLessThanOrEqual(5_000);
    expect(dropped.length).toBeGreaterThan(0);
    expect(dropped).toEqual(dropped.toSorted((a, b) => a - b));
    expect(spool.droppedCount).toBe(dropped.length);
    expect(spool.peek()!.upload!.job_id).toBe(dropped.at(-1)! + 1);
  });
});
