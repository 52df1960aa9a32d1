import { sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../src/db/client.ts";
import { configs, devices, type JobOutcome } from "../src/db/schema/index.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { queueForCompliance } from "../src/modules/compliance/index.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { compileCompareExclusions, type ExclusionRule } from "../src/modules/configs/index.ts";
import {
  compressChanged,
  digestOutputs,
  latestVersions,
  storeConfigs,
  type Digested,
  type StoreResult,
} from "../src/modules/configs/index.ts";
import { comparableText, implausibleConfiguration } from "../src/modules/templates/index.ts";
import { storedTextAndSecrets } from "../src/modules/templates/index.ts";
import { secretsDigest } from "../src/modules/configs/index.ts";
import type { Skipped } from "./collect.ts";
import type { SnmpReport } from "./snmp.ts";
import { parseTemplateOnce } from "./template-cache.ts";
import { recordBackupEnd } from "./backup-events.ts";
import { OutputMemory, rawHash, rulesKey, type RememberedOutput } from "./output-memory.ts";
import { cleanCommandOutput, SessionError } from "./session.ts";
import { NetconfReplyError, netconfConfigText } from "../src/modules/templates/index.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";

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
  /** The key the masked secret values are digested with (SecretBox.secretsDigestKey); without it none is kept. */
  secretsDigestKey?: Uint8Array;
  /**
   * Digests made where the outputs were masked (a remote collector's site, under its zone's key), by command and
   * already labelled (zoneDigestLabel): kept as they are, since the values they digest never reached here.
   */
  siteDigests?: Record<string, string>;
  /** Each command and what the session printed for it (secrets still in: they are taken out here). */
  outputs: [command: string, output: string][];
  /** The commands whose output is what the shell printed, to be cleaned here (Collected.printed; outputText). */
  printed: string[];
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

/** Outputs the store thread remembers (output-memory.ts): a fleet of 25,000 devices of four commands each. */
const memory = new OutputMemory(100_000);

/**
 * Stores one download: each output with its secrets out and filters applied, digested, compressed where it
 * changed, then versions, device state and the job's outcome in one transaction guarded by the lease, so a job
 * retried after its collector died can never store the same download twice. Returns how the job ended, or
 * undefined when the lease was lost and nothing was recorded. Throws SessionError output_invalid when the
 * configuration command's output cannot be a configuration (implausibleConfiguration): a successful empty
 * version would hide that the backup is gone. Checked here rather than in the session's event loop, where its
 * filtering cost every other session a millisecond.
 *
 * An output identical, byte for byte, to the one last stored for the same command under the same rules is
 * unchanged without filtering it again (OutputMemory), as long as the command's latest version is still the one
 * that output stored.
 */
export async function storeDownload(db: Db, request: StoreRequest): Promise<JobEnd | undefined> {
  const [stored] = await storeDownloads(db, [request]);
  if ("error" in stored!) throw stored.error;
  return stored!.end;
}

/** How storing one download of a batch went: as storeDownload would return or throw. */
export type Stored = { end: JobEnd | undefined } | { error: unknown };

/**
 * Stores several downloads as storeDownload stores one, in one write transaction: each is prepared first (no
 * lock), then written in a savepoint of its own, so one that fails or lost its lease leaves the others stored.
 * The store thread hands it every download that arrived while it stored the last ones: one transaction takes the
 * write lock once and commits once for all of them. One per download, the thread waited for the lock, shared with
 * the sessions' thread (claims, event dispatch), before each, and spent more wall time waiting than storing.
 */
export async function storeDownloads(db: Db, requests: readonly StoreRequest[]): Promise<Stored[]> {
  const results: Stored[] = [];
  const prepared = await Promise.all(
    requests.map((request, i) => prepare(request).catch((error: unknown) => void (results[i] = { error }))),
  );
  const moved: number[] = [];
  try {
    const written = await db.transaction(async (tx) => {
      const ends = new Map<number, Stored>();
      for (const [i, p] of prepared.entries()) {
        if (!p) continue;
        try {
          const end = await tx.transaction((savepoint) => write(savepoint, p));
          if (end === MOVED) moved.push(i);
          else ends.set(i, { end });
        } catch (error) {
          ends.set(i, error instanceof LeaseLost ? { end: undefined } : { error });
        }
      }
      return ends;
    });
    for (const [i, stored] of written) {
      results[i] = stored;
      // After the commit: a rolled-back store must not be remembered as stored.
      if ("end" in stored && stored.end) remember(prepared[i]!);
    }
  } catch (error) {
    for (const [i, p] of prepared.entries()) if (p) results[i] = { error };
    return results;
  }
  // A remembered latest version moved meanwhile (storeSame): those are stored the long way, one by one (rare).
  for (const i of moved) {
    try {
      const p = await prepare(requests[i]!, { longWay: true });
      const end = await db.transaction((tx) => write(tx, p));
      if (end !== MOVED) remember(p);
      results[i] = { end: end === MOVED ? undefined : end };
    } catch (error) {
      results[i] = error instanceof LeaseLost ? { end: undefined } : { error };
    }
  }
  return results;
}

/**
 * A command's output as text: what the shell printed cleaned as a terminal shows it (cleanCommandOutput: no
 * echo, one line ending, no trailing blanks), anything else as it came. Done here, on the store thread, not by
 * the session: the sessions' thread is shared by every session, and an output printed exactly as before is
 * recognised (OutputMemory) without being cleaned at all.
 */
export const outputText = (request: Pick<StoreRequest, "printed">, command: string, output: string) =>
  request.printed.includes(command) ? cleanCommandOutput(output, command) : output;

const NO_XML_RULES = { secrets: [], drop: [] };

/** What a syslog-triggered job says of who changed the configuration (collector/syslog/queue-backup.ts). */
const changedByOf = (job: Job): string | null =>
  typeof job.params?.changed_by === "string" ? job.params.changed_by : null;

/**
 * An output as the template's protocol gives it: a NETCONF answer as canonical XML, its secret elements masked
 * (netconf-xml.ts); a shell's as outputText cleans it. An answer that is no configuration stores nothing.
 */
export function templateText(
  request: Pick<StoreRequest, "printed">,
  template: ConnectionTemplate,
  command: string,
  output: string,
): string {
  if (template.protocol !== "netconf") return outputText(request, command, output);
  try {
    return netconfConfigText(output, template.netconf ?? NO_XML_RULES);
  } catch (err) {
    if (err instanceof NetconfReplyError)
      throw new SessionError("output_invalid", `${err.message}; nothing was stored`);
    throw err;
  }
}

/**
 * A download worked out before its transaction: either every output is the one last stored (`same`: one more
 * sighting each), or the outputs digested, checked and compressed where they changed.
 */
type Prepared = { request: StoreRequest; rules: string } & (
  | { same: (RememberedOutput & { command: string })[] }
  | {
      raws: string[];
      outputs: Digested[];
      compressed: Map<string, Uint8Array>;
      significant: (command: string, text: string) => string;
    }
);

async function prepare(request: StoreRequest, options: { longWay?: boolean } = {}): Promise<Prepared> {
  const rules = rulesKey(request.templateCode, request.exclusions);
  const raws = request.outputs.map(([command, output]) => ({
    command,
    // A site's output comes masked: its digest is what says the secrets behind it moved.
    raw: rawHash(request.siteDigests ? `${request.siteDigests[command] ?? ""}\n${output}` : output),
    remembered: memory.get(request.deviceId, command, rules),
  }));
  if (
    !options.longWay &&
    raws.length &&
    raws.every((r) => r.remembered?.raw === r.raw && request.storedHashes[r.command] === r.remembered.significantHash)
  ) {
    return { request, rules, same: raws.map((r) => ({ command: r.command, ...r.remembered! })) };
  }
  const parsed = parseTemplateOnce(request.templateCode);
  if (!parsed.ok) throw new Error("the device's connection template is invalid");
  const template = parsed.template;
  const key = template.secrets_reencrypted ? undefined : request.secretsDigestKey;
  const texts = request.outputs.map(([command, output]) => {
    const { text, secrets } = storedTextAndSecrets(templateText(request, template, command, output), template);
    const digest = request.siteDigests
      ? (request.siteDigests[command] ?? null)
      : key
        ? secretsDigest(key, secrets)
        : null;
    return { command, text, secretsDigest: template.secrets_reencrypted ? null : digest };
  });
  const config = texts.find((t) => t.command === template.config_command);
  const problem = config && implausibleConfiguration(config.text, template);
  if (problem) throw new SessionError("output_invalid", `${problem}; nothing was stored`);
  const exclusions = compileCompareExclusions(request.exclusions);
  const significant = (command: string, text: string) => exclusions.strip(command, comparableText(text, template));
  const outputs = await digestOutputs(texts, significant);
  // Compressing needs no write lock, so it happens before the transaction, for the outputs that differ from
  // what was stored when the job started; storeConfigs compresses any other it turns out to need.
  const compressed = await compressChanged(outputs, (command) => request.storedHashes[command]);
  return { request, rules, raws: raws.map((r) => r.raw), outputs, compressed, significant };
}

/** Writes a prepared download in `tx`; throws LeaseLost when the lease was lost. */
async function write(tx: DbOrTx, p: Prepared): Promise<JobEnd | typeof MOVED> {
  if ("same" in p) return storeSame(tx, p.request, p.same);
  const { request, outputs, compressed, significant } = p;
  const stored = await storeConfigs(tx, {
    deviceId: request.deviceId,
    outputs,
    compressed,
    significant,
    trigger: request.job.trigger,
    jobId: request.job.id,
    changedBy: changedByOf(request.job),
    now: request.now,
    onNewVersions: queueForCompliance,
  });
  return recordEnd(
    tx,
    request,
    stored,
    outputs.reduce((sum, o) => sum + o.size, 0),
    {},
  );
}

/** What a stored download's outputs came to, remembered (OutputMemory) once its transaction committed. */
function remember(p: Prepared): void {
  if ("same" in p) return;
  p.outputs.forEach((o, i) =>
    memory.set(p.request.deviceId, o.command, {
      rules: p.rules,
      raw: p.raws[i]!,
      significantHash: o.significantHash,
      size: o.size,
    }),
  );
}

/** storeSame found a command's latest version changed since its output was remembered: nothing was written. */
const MOVED = Symbol("moved");

/**
 * A download whose every output is the one last stored (storeDownload): one more sighting of each command's
 * latest version, if each still holds what that output stored (a version deleted or stored meanwhile by another
 * collector says otherwise: then MOVED, nothing written, and the download is stored the long way).
 */
async function storeSame(
  tx: DbOrTx,
  request: StoreRequest,
  same: (RememberedOutput & { command: string })[],
): Promise<JobEnd | typeof MOVED> {
  const latest = await latestVersions(
    tx,
    request.deviceId,
    same.map((s) => s.command),
  );
  const ids = same.map((s) =>
    latest.get(s.command)?.significantHash === s.significantHash ? latest.get(s.command)!.id : undefined,
  );
  if (ids.includes(undefined)) return MOVED;
  // SQL, not drizzle's builder, as recordEnd's: an unchanged download is mostly these statements.
  await tx.run(sql`update ${configs} set last_seen_at = ${request.now.getTime()}, seen_count = seen_count + 1
    where id in (${sql.join(
      (ids as number[]).map((id) => sql`${id}`),
      sql`, `,
    )})`);
  const stored = same.map((s, i) => ({ configId: ids[i]!, version: latest.get(s.command)!.version, changed: false }));
  return recordEnd(
    tx,
    request,
    stored,
    same.reduce((sum, s) => sum + s.size, 0),
    { verified_by: "output_hash" },
  );
}

/** The job's outcome, the device's state and the download's events, in the transaction that stored its outputs. */
async function recordEnd(
  tx: DbOrTx,
  request: StoreRequest,
  stored: StoreResult[],
  bytes: number,
  extra: Record<string, unknown>,
): Promise<JobEnd> {
  const { job, now } = request;
  const changed = stored.filter((s) => s.changed).length;
  const end = {
    outcome: changed ? ("success" as const) : ("unchanged" as const),
    message: changed ? `${changed} of ${stored.length} command outputs changed` : "no configuration change",
  };
  const { recorded } = await finishJob(
    tx,
    job,
    request.owner,
    {
      ...end,
      result: {
        duration_ms: Date.now() - request.startedAt,
        bytes,
        commands: stored.length,
        changed,
        config_ids: stored.map((s) => s.configId),
        ...extra,
        ...(request.skipped?.length ? { skipped_commands: request.skipped } : {}),
        ...request.snmp,
      },
    },
    now,
  );
  if (!recorded) throw new LeaseLost();
  // SQL, not drizzle's builder (40 us to build, for every download). Pins the host key on first use, unless a
  // key was pinned through the API while this job ran.
  const { snmpConfigChangedValue, snmpConfigChangedAt } = request.configChanged;
  await tx.run(sql`update ${devices} set status = 'up', last_seen_at = ${now.getTime()}, last_backup_at = ${now.getTime()},
    snmp_config_changed_value = ${snmpConfigChangedValue}, snmp_config_changed_at = ${snmpConfigChangedAt?.getTime() ?? null},
    host_key_fingerprint = coalesce(host_key_fingerprint, ${request.fingerprint ?? null}) where id = ${request.deviceId}`);
  await recordBackupEnd(tx, job, { ...end, retrying: false }, now);
  return { ...end, retrying: false };
}
