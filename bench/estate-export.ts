import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openDatabase } from "../src/db/client.ts";
import { exportResults } from "../src/modules/compliance/export.ts";
import { stopAllChildren } from "./children.ts";
import { sampleProcess } from "./proc-stats.ts";
import { buildBundles, startBenchService } from "./service.ts";

/**
 * `npx tsx bench/estate-export.ts --dir /tmp/netkeep-estate/estate-2000 [--runs 3]`: the v2 compliance export of
 * a built estate (bench/estate.ts) over HTTP, the service as `npm start` runs it, with the CPU seconds the API and
 * its collector spent during each export: where an export's time goes when it is slower than in-process.
 */
const { values: opts } = parseArgs({
  options: {
    dir: { type: "string" },
    runs: { type: "string", default: "3" },
    format: { type: "string", default: "csv" },
  },
});
if (!opts.dir) throw new Error("--dir <estate directory> is required");
const state = JSON.parse(readFileSync(join(opts.dir, "estate.json"), "utf8")) as { appKey: string };

buildBundles();
const service = await startBenchService({
  dir: join(opts.dir, "storage"),
  concurrency: 50,
  appKey: state.appKey,
  user: "bench",
});
try {
  for (let i = 0; i < Number(opts.runs); i++) {
    const api0 = sampleProcess(service.apiPid)!.cpuSeconds;
    const col0 = sampleProcess(service.collectorPid)?.cpuSeconds ?? 0;
    const t0 = performance.now();
    const res = await fetch(`${service.origin}/api/v2/policy-compliance/export?format=${opts.format}`, {
      headers: service.headers,
    });
    let bytes = 0;
    let firstByteMs = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (!bytes) firstByteMs = performance.now() - t0;
      bytes += chunk.length;
    }
    const ms = performance.now() - t0;
    const api = sampleProcess(service.apiPid)!.cpuSeconds - api0;
    const collector = (sampleProcess(service.collectorPid)?.cpuSeconds ?? 0) - col0;
    console.log(
      `export ${i + 1}: ${res.status} ${(bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms (first byte ${firstByteMs.toFixed(0)} ms); CPU s: API ${api.toFixed(2)}, collector ${collector.toFixed(2)}`,
    );
  }
} finally {
  await service.stop();
  await stopAllChildren();
}

// The same export read in this process, on the same database and load: the query, serialising and CSV alone.
const { db, client } = await openDatabase(`file:${join(opts.dir, "storage", "netkeep.db")}`);
for (let i = 0; i < Number(opts.runs); i++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const q = { where: undefined, fields: null, page: 1, perPage: 25, orderBy: [] };
  const stream = await exportResults(db, { all: true }, q, opts.format === "json" ? "json" : "csv");
  let bytes = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `in-process ${i + 1}: ${(bytes / 1e6).toFixed(1)} MB in ${(performance.now() - t0).toFixed(0)} ms; CPU s ${((cpu.user + cpu.system) / 1e6).toFixed(2)}`,
  );
}
client.close();
