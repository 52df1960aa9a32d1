import { eq, sql } from "drizzle-orm";
import type { Clock } from "../src/clock.ts";
import type { Db } from "../src/db/client.ts";
import { commandCategories, commands, compareExclusions, configs, credentials, devices, templates } from "../src/db/schema/index.ts";
import type { JobOutcome } from "../src/db/schema/index.ts";
import { failureReason } from "../src/error-reason.ts";
import { completeJob, type Job } from "../src/jobs/queue.ts";
import type { Logger } from "../src/logger.ts";
import { compileCompareExclusions, type ExclusionRule } from "../src/modules/configs/exclusions.ts";
import { compressChanged, markLatestSeen, storeConfigs } from "../src/modules/configs/store.ts";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { comparableText } from "../src/modules/templates/template-text.ts";
import type { SecretBox } from "../src/secrets/box.ts";
import { collect, untilAborted, type Login, type Plan, type Progress } from "./collect.ts";
import { describeError } from "./errors.ts";
import { DEFAULT_LIMITS, SessionError, type SessionLimits } from "./session.ts";
import { slots } from "./slots.ts";
import { configChangedColumns, snmpPrecheck, snmpResult, type SnmpPrecheck } from "./snmp.ts";

export type DownloadDeps = {
  db: Db;
  secrets: SecretBox;
  clock: Clock;
  logger: Logger;
  owner: string;
  limits?: SessionLimits;
  connectTimeoutMs?: number;
};

/**
 * Downloads compressing their outputs at once. Each holds its texts and their compressed copies meanwhile; 500
 * sessions finishing together, all compressing, took the collector past 700 MB.
 */
const preparing = slots(4);

/** Parsed templates by their text: a template changes rarely, and parsing its YAML for every job cost about 1 ms. */
const parsedTemplates = new Map<string, ReturnType<typeof parseTemplate>>();

function parseTemplateOnce(code: string): ReturnType<typeof parseTemplate> {
  let parsed = parsedTemplates.get(code);
  if (!parsed) {
    if (parsedTemplates.size >= 100) parsedTemplates.clear();
    parsed = parseTemplate(code);
    parsedTemplates.set(code, parsed);
  }
  return parsed;
}

/** A job's plan, the compare exclusions its outputs are digested with, and the hashes they are compared with. */
type LoadedPlan = { plan: Plan; exclusions: ExclusionRule[]; storedHashes: Record<string, string> };

/**
 * The device, its template, its login, the commands its category runs, the compare exclusions and the hashes
 * its outputs are compared with: one query, since each statement costs the collector more than its rows, and
 * built once per database (drizzle took 0.25 ms to build it for every job).
 */
function preparePlanQuery(db: Db) {
  return db
    .select({
      device: devices,
      templateCode: templates.code,
      cred: credentials,
      commands: sql<string>`(select json_group_array(c.command order by c.id) from ${commands} c
        join ${commandCategories} cc on cc.command_id = c.id where cc.category_id = ${devices.categoryId})`,
      exclusions: sql<string>`(select json_group_array(json_object('pattern', e.pattern, 'ignoreCase', json(iif(e.ignore_case, 'true', 'false')), 'command', e.command))
        from ${compareExclusions} e where e.enabled = 1)`,
      // Only a command's latest version keeps its hash (see the schema).
      storedHashes: sql<string>`(select json_group_object(v.command, v.significant_hash) from ${configs} v
        where v.device_id = ${devices.id} and v.significant_hash <> '')`,
    })
    .from(devices)
    .leftJoin(templates, eq(templates.id, devices.templateId))
    .leftJoin(credentials, eq(credentials.id, devices.credId))
    .where(eq(devices.id, sql.placeholder("deviceId")))
    .prepare();
}

const planQueries = new WeakMap<Db, ReturnType<typeof preparePlanQuery>>();

async function loadPlan(db: Db, secrets: SecretBox, deviceId: number): Promise<LoadedPlan> {
  let planQuery = planQueries.get(db);
  if (!planQuery) planQueries.set(db, (planQuery = preparePlanQuery(db)));
  const [row] = await planQuery.execute({ deviceId });
  if (!row) throw new SessionError("error", `device ${deviceId} no longer exists`);
  const { device, cred } = row;
  if (!device.templateId) throw new SessionError("error", "the device has no connection template; set device_template_id");
  const parsed = row.templateCode === null ? undefined : parseTemplateOnce(row.templateCode);
  if (!parsed?.ok) throw new SessionError("error", `the device's connection template ${device.templateId} is missing or invalid`);

  const decrypt = async (v: string | null | undefined) => (v ? await secrets.decrypt(v) : undefined);
  let login: Login;
  if (device.credId) {
    if (!cred) throw new SessionError("error", `credential set ${device.credId} no longer exists`);
    login = {
      username: cred.username, password: await decrypt(cred.passwordEnc), enablePassword: await decrypt(cred.enablePasswordEnc),
      privateKey: await decrypt(cred.sshKeyEnc), passphrase: await decrypt(cred.sshKeyPassphraseEnc),
    };
  } else {
    login = { username: device.username, password: await decrypt(device.passwordEnc), enablePassword: await decrypt(device.enablePasswordEnc) };
  }
  const categoryCommands = JSON.parse(row.commands) as string[];
  return {
    plan: { device, template: parsed.template, login, commands: categoryCommands.length ? categoryCommands : parsed.template.commands },
    exclusions: JSON.parse(row.exclusions) as ExclusionRule[],
    storedHashes: JSON.parse(row.storedHashes) as Record<string, string>,
  };
}

/**
 * Runs one download job end to end. Everything the job produces (config versions, device state, the job's
 * outcome) is written in one transaction guarded by the lease, so a job retried after its collector died can
 * never store the same download twice. Returns how the job ended, or undefined when its lease was lost and
 * nothing was recorded.
 */
export async function runDownloadJob(deps: DownloadDeps, job: Job, signal: AbortSignal): Promise<JobEnd | undefined> {
  const started = Date.now();
  const limits = deps.limits ?? DEFAULT_LIMITS;
  let plan: Plan | undefined;
  let precheck: SnmpPrecheck | undefined;
  const progress: Progress = { connected: false };
  try {
    const loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
    plan = loaded.plan;
    precheck = await untilAborted(snmpPrecheck(deps, plan), signal);
    if (precheck.skip) {
      const { message, report } = precheck;
      const now = deps.clock.now();
      await deps.db.transaction(async (tx) => {
        // Seen unchanged: the latest versions count this check as a sighting, as an identical download would.
        const configIds = await markLatestSeen(tx, plan!.device.id, plan!.commands, now);
        const { recorded } = await completeJob(tx, job, deps.owner, {
          outcome: "unchanged", message, result: { duration_ms: Date.now() - started, verified_by: "snmp", config_ids: configIds, snmp: report },
        }, now);
        if (!recorded) throw new LeaseLost();
        await tx.update(devices).set({ status: "up", lastSeenAt: now }).where(eq(devices.id, plan!.device.id));
      });
      return { outcome: "unchanged", message, retrying: false };
    }
    const exclusions = compileCompareExclusions(loaded.exclusions);
    const template = plan.template;
    const significant = (command: string, text: string) => exclusions.strip(command, comparableText(text, template));
    const collected = await collect({ plan, limits, connectTimeoutMs: deps.connectTimeoutMs ?? 20_000, significant }, signal, progress);
    const { fingerprint } = collected;
    const now = deps.clock.now();
    // Compressing needs no write lock, so it happens before the transaction, for the outputs that differ from
    // what was stored when the job started; storeConfigs compresses any other it turns out to need.
    const compressed = await preparing(() => compressChanged(collected.outputs, (command) => loaded.storedHashes[command]));
    const prepared = { deviceId: plan.device.id, outputs: collected.outputs, compressed, significant, trigger: job.trigger, jobId: job.id, now };
    const bytes = prepared.outputs.reduce((sum, o) => sum + o.size, 0);
    return await deps.db.transaction(async (tx): Promise<JobEnd> => {
      const stored = await storeConfigs(tx, prepared);
      const configIds = stored.map((s) => s.configId);
      const changed = stored.filter((s) => s.changed).length;
      const end = {
        outcome: changed ? "success" as const : "unchanged" as const,
        message: changed ? `${changed} of ${prepared.outputs.length} command outputs changed` : "no configuration change",
      };
      const { recorded } = await completeJob(tx, job, deps.owner, {
        ...end,
        result: { duration_ms: Date.now() - started, bytes, commands: prepared.outputs.length, changed, config_ids: configIds, ...snmpResult(precheck) },
      }, now);
      if (!recorded) throw new LeaseLost();
      await tx.update(devices).set({
        status: "up", lastSeenAt: now, lastBackupAt: now, ...configChangedColumns(precheck!),
        // Pins the key on first use, unless a key was pinned through the API while this job ran.
        ...(fingerprint ? { hostKeyFingerprint: sql`coalesce(${devices.hostKeyFingerprint}, ${fingerprint})` } : {}),
      }).where(eq(devices.id, plan!.device.id));
      return { ...end, retrying: false };
    });
  } catch (err) {
    if (err instanceof LeaseLost) {
      deps.logger.warn("lease lost; the job's results were discarded", { job: job.id });
      return undefined;
    }
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    if (!(err instanceof SessionError)) deps.logger.error("download failed unexpectedly", { job: job.id, error: describeError(err) });
    const now = deps.clock.now();
    const message = failure.outcome === "host_key_changed" ? `${failure.message}: POST /api/v1/devices/${job.deviceId}/host-key/reset` : failure.message;
    return await deps.db.transaction(async (tx): Promise<JobEnd | undefined> => {
      const { recorded, retrying } = await completeJob(tx, job, deps.owner, {
        outcome: failure.outcome,
        message,
        result: { duration_ms: Date.now() - started, ...(failure.lastLines.length ? { last_lines: failure.lastLines } : {}), ...snmpResult(precheck) },
      }, now);
      if (!recorded) {
        deps.logger.warn("lease lost; the job's outcome was discarded", { job: job.id, outcome: failure.outcome });
        return undefined;
      }
      const end = { outcome: failure.outcome, message, retrying };
      if (!plan) return end;
      const reachable = progress.connected || (failure.outcome !== "unreachable" && failure.outcome !== "timeout");
      await tx.update(devices).set(reachable ? { status: "up", lastSeenAt: now } : { status: "unreachable" }).where(eq(devices.id, plan.device.id));
      return end;
    });
  }
}

class LeaseLost extends Error {}

/** How a run ended, for the collector's log. */
export type JobEnd = { outcome: JobOutcome; message: string; retrying: boolean };
