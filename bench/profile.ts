import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

type ProfileNode = {
  id: number;
  hitCount?: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
};
type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number };

/** Where a frame's code lives: an npm package, a project file, or the runtime. */
function owner(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const project = /\/((?:src|bench|collector|dist)\/.+)$/.exec(url);
  if (project) return project[1]!;
  return url ? "node:internal" : "(native/gc/idle)";
}

/**
 * Self time of the hottest functions and of each package/file in the main-thread .cpuprofile files of `dir`
 * (Node names them CPU.<date>.<time>.<pid>.<thread>.<seq>; thread 0 is the main one, others are tsx's loader).
 */
export function summarizeProfiles(dir: string, top = 20): string {
  const lines: string[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))) {
    const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
    const samples = profile.nodes.reduce((n, node) => n + (node.hitCount ?? 0), 0);
    const byFunction = new Map<string, number>();
    const byOwner = new Map<string, number>();
    for (const node of profile.nodes) {
      const hits = node.hitCount ?? 0;
      if (!hits) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      const where = owner(url);
      const key = `${functionName || "(anonymous)"}  ${where}${url ? `:${lineNumber + 1}` : ""}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
      byOwner.set(where, (byOwner.get(where) ?? 0) + hits);
    }
    const pct = (n: number) => `${((100 * n) / samples).toFixed(1).padStart(5)}%`;
    const ranked = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
    lines.push(
      `\n${join(dir, file)} (${samples} samples, ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s)`,
    );
    lines.push("  self time by package / file:");
    for (const [name, n] of ranked(byOwner)) lines.push(`    ${pct(n)}  ${name}`);
    lines.push("  self time by function:");
    for (const [name, n] of ranked(byFunction)) lines.push(`    ${pct(n)}  ${name}`);
  }
  return lines.join("\n");
}
