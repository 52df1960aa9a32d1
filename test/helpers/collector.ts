import { eq, sql } from "drizzle-orm";
import { claimNextJob, enqueueDeviceJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { runDownloadJob } from "../../collector/download.ts";
import { DEFAULT_LIMITS, type SessionLimits } from "../../collector/session.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { configs, templates } from "../../src/db/schema/index.ts";
import { readBlob } from "../../src/modules/configs/storage/store.ts";
import type { TestContext } from "./app.ts";

/** The id of a seeded built-in template, by its file name (collector/templates/<key>.yaml). */
export async function builtinTemplateId(t: Pick<TestContext, "db">, key: string): Promise<number> {
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
      {
        db: t.db,
        secrets: t.secrets,
        clock: { now: () => new Date() },
        logger: silentLogger,
        owner: "test-collector",
        limits: { ...DEFAULT_LIMITS, ...options.limits },
        connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      },
      job,
      controller.signal,
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
    .where(
      sql`${configs.deviceId} = ${deviceId} and ${configs.version} = (select max(c2.version) from configs c2 where c2.device_id = ${configs.deviceId} and c2.command = ${configs.command})`,
    );
  const out = new Map<string, string>();
  for (const r of rows) out.set(r.command, await readBlob(t.db, r.blobHash));
  return out;
}

let deviceCounter = 0;

/** Creates a device over the API that points at a server on this machine; returns its id. */
export async function addLoopbackDevice(
  t: Pick<TestContext, "call">,
  token: string,
  device: { port: number; templateId: number; username?: string; password?: string; name?: string } & Record<
    string,
    unknown
  >,
): Promise<number> {
  const { port, templateId, username, password, name, ...rest } = device;
  const created = await t.call("/api/v1/devices", {
    method: "POST",
    token,
    body: {
      device_name: name ?? `loopback-device-${++deviceCounter}`,
      device_ip: "127.0.0.1",
      device_vendor: "Cisco",
      device_port_override: port,
      device_template_id: templateId,
      device_username: username,
      device_password: password,
      ...rest,
    },
  });
  if (created.status !== 201) throw new Error(`device not created: ${JSON.stringify(created.body)}`);
  return created.body.data.id;
}

export const IOS_CONFIG_COMMAND = "show running-config";

/**
 * A script for test/helpers/fake-device.ts that answers every line the built-in cisco-ios template sends
 * (setup, commands, teardown) as an IOS device named `hostname` with this running configuration would.
 */
export function iosScript(hostname: string, runningConfig: string[]) {
  const prompt = `${hostname}#`;
  const outputs: Record<string, string[]> = {
    "terminal length 0": [],
    "terminal width 0": [],
    [IOS_CONFIG_COMMAND]: ["Building configuration...", ...runningConfig],
    "show version": ["Cisco IOS XE Software, Version 17.09.04a"],
    "show vtp status": ["VTP Operating Mode                : Transparent"],
    "show inventory": ['NAME: "Chassis", DESCR: "Cisco Catalyst 9300"'],
  };
  return {
    prompt,
    script: (line: string): string | { answer: string; close: true } | undefined =>
      line === "exit"
        ? { answer: "exit\r\n", close: true }
        : outputs[line] && [line, ...outputs[line]!, prompt].join("\r\n"),
  };
}
