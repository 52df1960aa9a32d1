import { sampleProcess, waitUntilIdle, type ProcSample } from "./proc-stats.ts";
import { startBenchService } from "./service.ts";

/**
 * bench/task.ts's side of the service bench/service.ts starts as a user runs it: a download_all task over the
 * devices, each run started with `POST /tasks/{id}/run` and polled until it has a finished_at.
 */

/** A user's dashboard polling a run; the poll's own CPU is counted in the API's. */
const POLL_MS = 500;

export type TaskRunResult = {
  devices: number;
  /** The run request to the run's finished_at. */
  elapsedMs: number;
  /** The run request to the first job's started_at. */
  firstStartMs: number;
  counts: Record<string, number>;
  failures: string[];
  /** Each device's job as the collector recorded it (duration_ms: session and storing). */
  jobMs: number[];
  apiCpuSeconds: number;
  collectorCpuSeconds: number;
  collectorPeakRssKb: number;
};

export type TaskService = {
  apiPid: number;
  collectorPid: number;
  /** One run of the download_all task over every device, timed. */
  run(timeoutMs: number): Promise<TaskRunResult>;
  /**
   * Waits until the collector has been idle for a second (waitUntilIdle): after a run it indexes what it stored
   * for search and checks compliance, in its spare time, as it would before the next night's run. Resolves with how long that took and the CPU it cost.
   */
  settle(timeoutMs: number): Promise<{ ms: number; cpuSeconds: number }>;
  stop(): Promise<void>;
};

export async function startTaskService(options: {
  dir: string;
  ports: number[];
  concurrency: number;
  profileDir?: string;
}): Promise<TaskService> {
  const bench = await startBenchService(options);
  const { api, collectorPid, stop } = bench;
  try {
    await bench.createDevices(options.ports);
    const task = await api<{ id: number }>("POST", "/tasks", {
      task_name: "bench backup",
      task_type: "download_all",
      task_cron: "0 3 * * *",
      is_paused: true,
    });

    type RunView = { id: number; finished_at: string | null; counts: Record<string, number> };
    type ItemView = {
      device_name: string;
      status: string;
      error: string | null;
      started_at: string | null;
      duration_ms: number | null;
    };
    const run = async (timeoutMs: number): Promise<TaskRunResult> => {
      const apiBefore = sampleProcess(bench.apiPid)!;
      const collectorBefore = sampleProcess(collectorPid)!;
      let collectorLast: ProcSample = collectorBefore;
      const requestedAt = Date.now();
      let view = await api<RunView>("POST", `/tasks/${task.id}/run`);
      while (!view.finished_at) {
        if (Date.now() - requestedAt > timeoutMs)
          throw new Error(`the run did not finish in ${timeoutMs / 1000} s: ${JSON.stringify(view.counts)}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
        collectorLast = sampleProcess(collectorPid) ?? collectorLast;
        view = await api<RunView>("GET", `/task-runs/${view.id}`);
      }
      const apiAfter = sampleProcess(bench.apiPid) ?? apiBefore;
      collectorLast = sampleProcess(collectorPid) ?? collectorLast;
      const items: ItemView[] = [];
      for (let page = 1; ; page++) {
        const batch = await api<ItemView[]>(
          "GET",
          `/task-runs/${view.id}/devices?per_page=500&page=${page}&fields=device_name,status,error,started_at,duration_ms`,
        );
        items.push(...batch);
        if (batch.length < 500) break;
      }
      const starts = items.flatMap((i) => (i.started_at ? [Date.parse(i.started_at)] : []));
      return {
        devices: items.length,
        elapsedMs: Date.parse(view.finished_at) - requestedAt,
        firstStartMs: Math.min(...starts) - requestedAt,
        counts: Object.fromEntries(Object.entries(view.counts).filter(([k, n]) => n && k !== "total")),
        failures: items
          .filter((i) => i.status !== "succeeded" && i.status !== "unchanged")
          .slice(0, 5)
          .map((i) => `${i.device_name}: ${i.status}: ${i.error}`),
        jobMs: items.flatMap((i) => (typeof i.duration_ms === "number" ? [i.duration_ms] : [])),
        apiCpuSeconds: apiAfter.cpuSeconds - apiBefore.cpuSeconds,
        collectorCpuSeconds: collectorLast.cpuSeconds - collectorBefore.cpuSeconds,
        collectorPeakRssKb: collectorLast.peakRssKb,
      };
    };
    const settle = (timeoutMs: number) => waitUntilIdle([collectorPid], timeoutMs);
    return { apiPid: bench.apiPid, collectorPid, run, settle, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
