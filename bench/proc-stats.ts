import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Memory and CPU of another process, read from Linux's /proc (the bench children are ours, on this machine). */

export type ProcSample = { rssKb: number; peakRssKb: number; cpuSeconds: number };

let ticksPerSecond: number | undefined;
const clockTicks = () =>
  (ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100);

/** Undefined once the process is gone. */
export function sampleProcess(pid: number): ProcSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    return { rssKb: kb("VmRSS"), peakRssKb: kb("VmHWM"), cpuSeconds: cpuTicks / clockTicks() };
  } catch {
    return undefined;
  }
}

/** A child process of `parent` whose command line holds `command` (the collector a service started), found through /proc. */
export function childOf(parent: number, command: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(command)) return Number(entry);
    } catch {
      // Gone since the listing.
    }
  }
  return undefined;
}

/**
 * Waits until the processes together have been idle (under 10% of a core: a profiled one costs about 7% doing
 * nothing) for a second, or `timeoutMs` passed. Resolves with how long that took and the CPU they spent meanwhile.
 */
export async function waitUntilIdle(
  pids: readonly number[],
  timeoutMs: number,
): Promise<{ ms: number; cpuSeconds: number }> {
  const cpu = () => pids.reduce((sum, pid) => sum + (sampleProcess(pid)?.cpuSeconds ?? 0), 0);
  const began = performance.now();
  const first = cpu();
  let last = first;
  for (let quiet = 0; quiet < 4 && performance.now() - began < timeoutMs; ) {
    await new Promise((r) => setTimeout(r, 250));
    const now = Math.max(cpu(), last);
    quiet = now - last < 0.025 ? quiet + 1 : 0;
    last = now;
  }
  return { ms: performance.now() - began, cpuSeconds: last - first };
}
