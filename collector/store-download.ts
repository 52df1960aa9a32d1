import { eq, sql } from "drizzle-orm";
import type { Db } from "../src/db/client.ts";
import { devices, type JobOutcome } from "../src/db/schema/index.ts";
import { completeJob, type Job } from "../src/jobs/queue.ts";
import { compileCompareExclusions, type ExclusionRule } from "../src/modules/configs/exclusions.ts";
import { compressChanged, digestOutputs, storeConfigs, type Digested } from "../src/modules/configs/store.ts";
import { comparableText, storedText } from "../src/modules/templates/template-text.ts";
import type { Skipped } from "./collect.ts";
import type { SnmpReport } from "./snmp.ts";
import { parseTemplateOnce } from "./template-cache.ts";
import { recordBackupEnd } from "./backup-events.ts";

/**
 * What a finished session hands over to be stored, as plain data: the collector stores on a thread of its own
 * (store-thread.ts), which gets a copy of this and nothing else.
 */
export type StoreRequest = {
  job: Job;
  /** The collector holding the job's lease: the outcome is recorded only while it still does. */
  owner: string;
  deviceId: number;
  /** The device's connection template, as text (parsed once per text where it is stored). */
  templateCode: string;
  /** The compare exclusions the outputs are digested with, and each command's hash as stored when the job started. */
  exclusions: ExclusionRule[];
  storedHashes: Record<string, string>;
  /** Each command and what the session printed for it (secrets still in: they are taken out here). */
  outputs: [command: string, output: string][];
  /** Optional setup lines and commands the session skipped, and why (collect.ts). */
  skipped?: Skipped[];
  /** The host key the session saw (SSH), pinned on first use. */
  fingerprint?: string;
  /** What the SNMP check before the session read, for the job's result and the device's columns. */
  snmp: { snmp?: SnmpReport };
  configChanged: { snmpConfigChangedValue: string | null; snmpConfigChangedAt: Date | null };
  startedAt: number;
  now: Date;
};

/** How a run ended, for the collector's log. */
export type JobEnd = { outcome: JobOutcome; message: string; retrying: boolean };

/** The job's lease passed to another collector meanwhile: everything this run wrote is rolled back. */
export class LeaseLost extends Error {}

/**
 * Stores one download: each output with its secrets out and filters applied, digested, compressed where it
 * changed, then versions, device state and the job's outcome in one transaction guarded by the lease, so a job
 * retried after its collector died can never store the same download twice. Returns how the job ended, or
 * undefined when the lease was lost and nothing was recorded.
 */
export async function storeDownload(db: Db, request: StoreRequest): Promise<JobEnd | undefined> {
  const parsed = parseTemplateOnce(request.templateCode);
  if (!parsed.ok) throw new Error("the device's connection template is invalid");
  const template = parsed.template;
  const exclusions = compileCompareExclusions(request.exclusions);
  const significant = (command: string, text: string) => exclusions.strip(command, comparableText(text, template));
  const outputs = await digestOutputs(request.outputs.map(([command, output]) => ({ command, text: storedText(output, template) })), significant);
  // Compressing needs no write lock, so it happens before the transaction, for the outputs that differ from
  // what was stored when the job started; storeConfigs compresses any other it turns out to need.
  const compressed = await compressChanged(outputs, (command) => request.storedHashes[command]);
  try {
    return await storeInTransaction(db, request, outputs, compressed, significant);
  } catch (err) {
    if (err instanceof LeaseLost) return undefined;
    throw err;
  }
}

async function storeInTransaction(
  db: Db, request: StoreRequest, outputs: Digested[], compressed: Map<string, Uint8Array>, significant: (command: string, text: string) => string,
): Promise<JobEnd> {
  const { job, now } = request;
  const bytes = outputs.reduce((sum, o) => sum + o.size, 0);
  return await db.transaction(async (tx): Promise<JobEnd> => {
    const stored = await storeConfigs(tx, { deviceId: request.deviceId, outputs, compressed, significant, trigger: job.trigger, jobId: job.id, now });
    const changed = stored.filter((s) => s.changed).length;
    const end = {
      outcome: changed ? "success" as const : "unchanged" as const,
      message: changed ? `${changed} of ${outputs.length} command outputs changed` : "no configuration change",
    };
    const { recorded } = await completeJob(tx, job, request.owner, {
      ...end,
      result: {
        duration_ms: Date.now() - request.startedAt, bytes, commands: outputs.length, changed, config_ids: stored.map((s) => s.configId),
        ...(request.skipped?.length ? { skipped_commands: request.skipped } : {}), ...request.snmp,
      },
    }, now);
    if (!recorded) throw new LeaseLost();
    await tx.update(devices).set({
      status: "up", lastSeenAt: now, lastBackupAt: now, ...request.configChanged,
      // Pins the key on first use, unless a key was pinned through the API while this job ran.
      ...(request.fingerprint ? { hostKeyFingerprint: sql`coalesce(${devices.hostKeyFingerprint}, ${request.fingerprint})` } : {}),
    }).where(eq(devices.id, request.deviceId));
    await recordBackupEnd(tx, job, { ...end, retrying: false }, now);
    return { ...end, retrying: false };
  });
}
