import { sampleProcess, type ProcSample } from "./proc-stats.ts";
import { startBenchService } from "./service.ts";

/**
 * The end-to-end phase of bench/deploy.ts: the service as `npm start` runs it (bench/service.ts), driven only
 * through its API as a user would: the devices on the cisco-ios template (one bulk create), a snippet,
 * `POST /snippets/{id}/deploy` to all of them,
 * then `GET /snippet-deployments/{id}` polled until it finishes. The time is from the deploy call to the
 * deployment's finished_at (its last device's push recorded), so neither the set-up nor the polling counts.
 */

const POLL_MS = 250;

export type ServiceDeployRun = {
  devices: number;
  /** The deploy call to the deployment's finished_at. */
  elapsedMs: number;
  deviceCounts: Record<string, number>;
  failures: string[];
  /** Each device's push job as the collector recorded it (download before, push, download after). */
  jobMs: number[];
  /** CPU of the API and collector processes over the deployment. */
  apiCpuSeconds: number;
  collectorCpuSeconds: number;
  collectorPeakRssKb: number;
};

export async function runServiceDeploy(options: {
  dir: string;
  ports: number[];
  lines: string[];
  concurrency: number;
  timeoutMs: number;
  profileDir?: string;
}): Promise<ServiceDeployRun> {
  const bench = await startBenchService(options);
  const { api, collectorPid } = bench;
  try {
    const created = await bench.createDevices(options.ports);
    const snippet = await api<{ id: number }>("POST", "/snippets", {
      name: "bench deploy",
      content: options.lines.join("\n"),
    });

    const apiBefore = sampleProcess(bench.apiPid)!;
    const collectorBefore = sampleProcess(collectorPid)!;
    let collectorLast: ProcSample = collectorBefore;
    const deployedAt = Date.now();
    const deployment = await api<{ id: number }>("POST", `/snippets/${snippet.id}/deploy`, {
      devices: created.map((d) => d.id),
      confirm_device_count: created.length,
      concurrency: options.concurrency,
    });
    type DeploymentView = { state: string; finished_at: string | null; device_counts: Record<string, number> };
    let view: DeploymentView;
    for (;;) {
      view = await api<DeploymentView>("GET", `/snippet-deployments/${deployment.id}`);
      collectorLast = sampleProcess(collectorPid) ?? collectorLast;
      if (view.state === "finished") break;
      if (Date.now() - deployedAt > options.timeoutMs)
        throw new Error(
          `the deployment did not finish in ${options.timeoutMs / 1000} s: ${JSON.stringify(view.device_counts)}`,
        );
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const apiAfter = sampleProcess(bench.apiPid) ?? apiBefore;

    type DeviceView = {
      device_name: string;
      status: string;
      message: string | null;
      result: { duration_ms?: number } | null;
    };
    const rows: DeviceView[] = [];
    for (let page = 1; rows.length < created.length; page++) {
      const batch = await api<DeviceView[]>(
        "GET",
        `/snippet-deployments/${deployment.id}/devices?per_page=100&page=${page}&fields=device_name,status,message,result`,
      );
      if (!batch.length) break;
      rows.push(...batch);
    }
    return {
      devices: created.length,
      elapsedMs: Date.parse(view.finished_at!) - deployedAt,
      deviceCounts: Object.fromEntries(Object.entries(view.device_counts).filter(([, n]) => n)),
      failures: rows
        .filter((r) => r.status !== "success")
        .slice(0, 5)
        .map((r) => `${r.device_name}: ${r.status}: ${r.message}`),
      jobMs: rows.flatMap((r) => (typeof r.result?.duration_ms === "number" ? [r.result.duration_ms] : [])),
      apiCpuSeconds: apiAfter.cpuSeconds - apiBefore.cpuSeconds,
      collectorCpuSeconds: collectorLast.cpuSeconds - collectorBefore.cpuSeconds,
      collectorPeakRssKb: collectorLast.peakRssKb,
    };
  } finally {
    await bench.stop();
  }
}
