/** Shared set-up of the configs tests: devices over the API, versions stored as a finished download stores them. */
import type { TestContext } from "../../../test/helpers/app.ts";
import { jobs, type JobTrigger } from "../../db/schema/index.ts";
import { storeConfig } from "./storage/store.ts";
import { queueForCompliance } from "../compliance/pending.ts";

export const RUNNING = "show running-config";
export const day = (n: number, hour = 12) => new Date(Date.UTC(2026, 5, n, hour));

export async function createDevice(
  t: Pick<TestContext, "call">,
  token: string,
  body: Record<string, unknown>,
): Promise<number> {
  const res = await t.call("/api/v1/devices", {
    method: "POST",
    token,
    body: { device_ip: "192.0.2.10", device_vendor: "Cisco", ...body },
  });
  if (res.status !== 201) throw new Error(`device not created: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** Stores a download's text under a finished job with this duration, as the collector does; returns storeConfig's answer. */
export async function storeVersion(
  t: Pick<TestContext, "db">,
  v: {
    deviceId: number;
    text: string;
    at: Date;
    command?: string;
    durationMs?: number;
    trigger?: JobTrigger;
    significant?: (text: string) => string;
  },
) {
  const trigger = v.trigger ?? "schedule";
  const [job] = await t.db
    .insert(jobs)
    .values({
      type: "download",
      deviceId: v.deviceId,
      state: "finished",
      outcome: "success",
      trigger,
      runAfter: v.at,
      createdAt: v.at,
      startedAt: v.at,
      finishedAt: v.at,
      result: { duration_ms: v.durationMs ?? 1000 },
    })
    .returning({ id: jobs.id });
  return storeConfig(t.db, {
    deviceId: v.deviceId,
    command: v.command ?? RUNNING,
    text: v.text,
    significant: v.significant ?? ((x) => x),
    trigger,
    jobId: job!.id,
    now: v.at,
    // As the collector stores: the after-backup compliance pass hears of new versions.
    onNewVersions: queueForCompliance,
  });
}
