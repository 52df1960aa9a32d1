import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stopAllChildren } from "./children.ts";
import { quantile } from "./estate-probe.ts";
import type { EstateState } from "./estate-build.ts";
import { buildBundles, startBenchService } from "./service.ts";

/**
 * `npm run bench:purge [-- --estate /tmp/netkeep-estate/estate-2000 --keep-days 15]`
 *
 * The retention purge of bench:estate on its own: copies an estate bench:estate built (its database only, so the
 * estate stays as it was), starts the service on the copy as `npm start` runs it, sets keep_days (default: half
 * the nights) and times `POST /configs/purge` while `GET /devices` is requested one after another: the purge's
 * duration and the API's latency meanwhile (p50, p99, the slowest), beside the same request's before it.
 */
const { values: opts } = parseArgs({
  options: {
    estate: { type: "string", default: "/tmp/netkeep-estate/estate-2000" },
    "keep-days": { type: "string" },
  },
});
const estate = opts.estate!;
const state = JSON.parse(readFileSync(join(estate, "estate.json"), "utf8")) as EstateState;
const keepDays = Number(opts["keep-days"] ?? Math.max(1, Math.floor(state.daysDone / 2)));
const ms = (t: number) => (t < 10 ? t.toFixed(1) : t.toFixed(0));

async function main() {
  buildBundles();
  const dir = mkdtempSync(join(tmpdir(), "netkeep-purge-"));
  try {
    // The estate's builder closed its database cleanly: the file alone is the whole database.
    copyFileSync(join(estate, "storage", "netkeep.db"), join(dir, "netkeep.db"));
    const service = await startBenchService({ dir, concurrency: 1, appKey: state.appKey, user: "bench" });
    try {
      await service.api("PUT", "/configs/retention-policy", { keep_days: keepDays, keep_versions: null });
      // The same request before the purge, for comparison (the machine's load shows in both).
      const idle: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r0 = performance.now();
        await (await fetch(`${service.origin}/api/v1/devices`, { headers: service.headers })).arrayBuffer();
        idle.push(performance.now() - r0);
      }
      console.log(
        `GET /devices before the purge: p50 ${ms(quantile(idle, 0.5))} ms, p99 ${ms(quantile(idle, 0.99))} ms (20 requests)`,
      );
      const t0 = performance.now();
      const purge = service.api<{ configs_total: number; blobs_total: number }>("POST", "/configs/purge");
      let done = false;
      void purge.finally(() => (done = true)).catch(() => undefined);
      const times: number[] = [];
      const starts: number[] = [];
      while (!done) {
        const r0 = performance.now();
        const res = await fetch(`${service.origin}/api/v1/devices`, { headers: service.headers });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`GET /devices answered ${res.status} during the purge`);
        times.push(performance.now() - r0);
        starts.push(r0 - t0);
      }
      const report = await purge;
      const took = performance.now() - t0;
      const slowest = times
        .map((t, i) => ({ t, at: starts[i]! }))
        .sort((a, b) => b.t - a.t)
        .slice(0, 3)
        .map((s) => `${ms(s.t)} ms at ${(s.at / 1000).toFixed(1)} s`);
      console.log(`slowest requests: ${slowest.join(", ")}`);
      console.log(
        `| purge of ${report.configs_total} versions (${report.blobs_total} texts) older than ${keepDays} days, ${state.devices} devices x ${state.daysDone} nights | ${(took / 1000).toFixed(1)} s | GET /devices meanwhile: ${times.length} requests, p50 ${ms(quantile(times, 0.5))} ms, p99 ${ms(quantile(times, 0.99))} ms, slowest ${ms(Math.max(...times))} ms |`,
      );
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`,
  );
}

process.on("SIGINT", () => void stopAllChildren().then(() => process.exit(130)));
try {
  await main();
} finally {
  await stopAllChildren();
}
