import { eq, sql } from "drizzle-orm";
import { claimNextJob, enqueueDeviceJob, getJob, type Job } from "../../src/jobs/queue.ts";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS, type SessionLimits } from "../../collector/session.ts";
import { silentLogger } from "../../src/logger.ts";
import { configs, templates } from "../../src/db/schema/index.ts";
import { readBlob } from "../../src/modules/configs/store.ts";
import type { TestContext } from "./app.ts";

/** The id of a seeded built-in template, by its file name (collector/templates/<key>.yaml). */
export async function builtinTemplateId(t: TestContext, key: string): Promise<number> {
  const [row] = await t.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, key));
  if (!row) throw new Error(`no built-in template '${key}'`);
  return row.id;
}

/**
 * Runs one download for a device the way a collector does (queue, claim, run, complete), in this process,
 * and returns the finished job. Retryable failures are not retried here: the job is read back as it was left.
 */
export async function downloadOnce(
  t: TestContext,
  deviceId: number,
  options: { limits?: Partial<SessionLimits>; jobTimeLimitMs?: number; connectTimeoutMs?: number } = {},
): Promise<Job> {
  const now = new Date();
  await enqueueDeviceJob(t.db, { type: "download", deviceId, trigger: "api", priority: 50, maxAttempts: 1 }, now);
  const job = await claimNextJob(t.db, "test-collector", now, 60_000);
  if (!job) throw new Error("no job to claim");
  const controller = new AbortController();
  const limit = setTimeout(() => controller.abort("the job ran past its time limit"), options.jobTimeLimitMs ?? 60_000);
  try {
    await runDownloadJob(
      { db: t.db, secrets: t.secrets, clock: { now: () => new Date() }, logger: silentLogger, owner: "test-collector",
        limits: { ...DEFAULT_LIMITS, ...options.limits }, connectTimeoutMs: options.connectTimeoutMs ?? 10_000 },
      job, controller.signal,
    );
  } finally {
    clearTimeout(limit);
  }
  return (await getJob(t.db, job.id))!;
}

/** The latest stored text of each command for a device. */
export async function latestConfigs(t: TestContext, deviceId: number): Promise<Map<string, string>> {
  const rows = await t.db
    .select()
    .from(configs)
    .where(sql`${configs.deviceId} = ${deviceId} and ${configs.version} = (select max(c2.version) from configs c2 where c2.device_id = ${configs.deviceId} and c2.command = ${configs.command})`);
  const out = new Map<string, string>();
  for (const r of rows) out.set(r.command, await readBlob(t.db, r.blobHash));
  return out;
}
