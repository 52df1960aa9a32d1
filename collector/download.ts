import { eq, inArray, sql } from "drizzle-orm";
import type { Clock } from "../src/clock.ts";
import type { Db } from "../src/db/client.ts";
import { commandCategories, commands, credentials, devices, templates } from "../src/db/schema/index.ts";
import type { JobOutcome } from "../src/db/schema/index.ts";
import { completeJob, type Job } from "../src/jobs/queue.ts";
import type { Logger } from "../src/logger.ts";
import { markLatestSeen, prepareStore, storeConfigs } from "../src/modules/configs/store.ts";
import { loadCompareExclusions } from "../src/modules/configs/exclusions.ts";
import { normalizeConfigText } from "../src/modules/configs/text.ts";
import { parseTemplate, type ConnectionTemplate } from "../src/modules/templates/template-schema.ts";
import { comparableText, storedText } from "../src/modules/templates/template-text.ts";
import type { SecretBox } from "../src/secrets/box.ts";
import { DEFAULT_LIMITS, SessionError, ShellSession, type SessionLimits, type SessionProfile } from "./session.ts";
import { configChangedColumns, snmpPrecheck, snmpResult, type SnmpPrecheck } from "./snmp.ts";
import { openTelnet } from "./transports/telnet.ts";
import { SshConnection } from "./transports/ssh.ts";
import { failureReason } from "../src/error-reason.ts";
import { describeError } from "./errors.ts";
import { slots } from "./slots.ts";

/** An error for the log: drizzle wraps the driver's error (SQLITE_BUSY ...) in "Failed query: <sql>", so its cause goes too. */
export type DownloadDeps = {
  db: Db;
  secrets: SecretBox;
  clock: Clock;
  logger: Logger;
  owner: string;
  limits?: SessionLimits;
  connectTimeoutMs?: number;
};

type Login = { username: string; password?: string; enablePassword?: string; privateKey?: string; passphrase?: string };

export function sessionProfileOf(t: ConnectionTemplate, withLogin: boolean): SessionProfile {
  return {
    prompt: new RegExp(t.prompt ?? "$^"),
    pager: t.pager && { pattern: new RegExp(t.pager.pattern), answer: t.pager.answer },
    login: withLogin ? { usernamePrompt: new RegExp(t.login.username_prompt), passwordPrompt: new RegExp(t.login.password_prompt) } : undefined,
    enable: t.enable && { command: t.enable.command, passwordPrompt: new RegExp(t.enable.password_prompt), prompt: t.enable.prompt ? new RegExp(t.enable.prompt) : undefined },
    lineEnding: t.line_ending,
  };
}

/**
 * Downloads being prepared for storing at once (prepareStore: filtering, hashing, compressing). Each makes and
 * holds several copies of its texts meanwhile; 500 sessions finishing together, all preparing, took the collector
 * past 700 MB. Waiting, a download holds only what its session printed.
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

/** The device, its template, its login and the commands its category runs: everything a session needs. */
async function loadPlan(db: Db, secrets: SecretBox, deviceId: number) {
  const [device] = await db.select().from(devices).where(eq(devices.id, deviceId));
  if (!device) throw new SessionError("error", `device ${deviceId} no longer exists`);
  if (!device.templateId) throw new SessionError("error", "the device has no connection template; set device_template_id");
  const [templateRow] = await db.select().from(templates).where(eq(templates.id, device.templateId));
  const parsed = templateRow ? parseTemplateOnce(templateRow.code) : undefined;
  if (!parsed?.ok) throw new SessionError("error", `the device's connection template ${device.templateId} is missing or invalid`);

  const decrypt = async (v: string | null | undefined) => (v ? await secrets.decrypt(v) : undefined);
  let login: Login;
  if (device.credId) {
    const [cred] = await db.select().from(credentials).where(eq(credentials.id, device.credId));
    if (!cred) throw new SessionError("error", `credential set ${device.credId} no longer exists`);
    login = {
      username: cred.username, password: await decrypt(cred.passwordEnc), enablePassword: await decrypt(cred.enablePasswordEnc),
      privateKey: await decrypt(cred.sshKeyEnc), passphrase: await decrypt(cred.sshKeyPassphraseEnc),
    };
  } else {
    login = { username: device.username, password: await decrypt(device.passwordEnc), enablePassword: await decrypt(device.enablePasswordEnc) };
  }

  let commandList: string[] = [];
  if (device.categoryId) {
    const rows = await db
      .select({ command: commands.command })
      .from(commands)
      .innerJoin(commandCategories, eq(commandCategories.commandId, commands.id))
      .where(inArray(commandCategories.categoryId, [device.categoryId]))
      .orderBy(commands.id);
    commandList = rows.map((r) => r.command);
  }
  if (!commandList.length) commandList = parsed.template.commands;
  return { device, template: parsed.template, login, commands: commandList };
}

export type Plan = Awaited<ReturnType<typeof loadPlan>>;

/** Runs the setup and the commands in an interactive CLI session, and returns each command's cleaned output. */
async function runShell(session: ShellSession, plan: Plan): Promise<Map<string, string>> {
  const { template, login } = plan;
  if (template.enable && login.enablePassword) await session.enable(login.enablePassword);
  for (const line of template.setup) await session.run(line);
  const outputs = new Map<string, string>();
  // The session's output is rendered as a terminal shows it: one line ending, no trailing blanks (terminal.ts).
  for (const command of plan.commands) outputs.set(command, await session.run(command));
  for (const line of template.teardown) session.send(line);
  return outputs;
}

/** What a failed download got as far as: a device that answered is up, whatever went wrong afterwards. */
type Progress = { connected: boolean };

async function collectOverSsh(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal, progress: Progress) {
  const { template, device, login } = plan;
  const conn = await SshConnection.connect({
    host: device.ip, port: device.portOverride ?? template.port, username: login.username, password: login.password,
    privateKey: login.privateKey, passphrase: login.passphrase, legacyAlgorithms: template.legacy_algorithms,
    pinnedFingerprint: device.hostKeyFingerprint, connectTimeoutMs,
  });
  // The job may have been given up while the handshake ran (see untilAborted): then this connection is nobody's.
  if (signal.aborted) {
    conn.close();
    throw abortError(signal);
  }
  progress.connected = true;
  const onAbort = () => conn.close();
  signal.addEventListener("abort", onAbort);
  try {
    if (template.exec) {
      const outputs = new Map<string, string>();
      for (const line of template.setup) await conn.exec(line, limits.idleTimeoutMs, limits.maxOutputBytes);
      for (const command of plan.commands) {
        outputs.set(command, normalizeConfigText(await conn.exec(command, limits.idleTimeoutMs, limits.maxOutputBytes)));
      }
      return { outputs, fingerprint: conn.fingerprint };
    }
    const session = new ShellSession(await conn.shell(), sessionProfileOf(template, false), limits);
    await session.expectPrompt();
    return { outputs: await runShell(session, plan), fingerprint: conn.fingerprint };
  } finally {
    signal.removeEventListener("abort", onAbort);
    conn.close();
  }
}

async function collectOverTelnet(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal, progress: Progress) {
  const { template, device, login } = plan;
  const channel = await openTelnet({ host: device.ip, port: device.portOverride ?? template.port, connectTimeoutMs });
  if (signal.aborted) {
    channel.close();
    throw abortError(signal);
  }
  progress.connected = true;
  const onAbort = () => channel.close();
  signal.addEventListener("abort", onAbort);
  try {
    const session = new ShellSession(channel, sessionProfileOf(template, true), limits);
    await session.login(login.username, login.password ?? "");
    return { outputs: await runShell(session, plan), fingerprint: undefined };
  } finally {
    signal.removeEventListener("abort", onAbort);
    channel.close();
  }
}

const abortError = (signal: AbortSignal) => new SessionError("timeout", String(signal.reason ?? "the job ran past its time limit"));

/**
 * Settles with the work, or fails as soon as the signal fires, whatever the work is waiting for (a handshake
 * with its own, longer timeout, an SNMP request): the job's time limit holds for every step. Work left behind
 * cleans up after itself (collectOverSsh closes a connection that completes after the abort).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Logs in over the template's protocol and returns each command's cleaned output. */
async function collect(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal, progress: Progress): Promise<{ outputs: Map<string, string>; fingerprint?: string }> {
  try {
    return await untilAborted<{ outputs: Map<string, string>; fingerprint?: string }>(
      plan.template.protocol === "telnet"
        ? collectOverTelnet(plan, limits, connectTimeoutMs, signal, progress)
        : collectOverSsh(plan, limits, connectTimeoutMs, signal, progress),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
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
    plan = await loadPlan(deps.db, deps.secrets, job.deviceId!);
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
    const collected = await collect(plan, limits, deps.connectTimeoutMs ?? 20_000, signal, progress);
    const { fingerprint } = collected;
    const template = plan.template;
    const now = deps.clock.now();
    // Everything that needs no write lock happens before the transaction: other jobs wait for the lock.
    const exclusions = await loadCompareExclusions(deps.db);
    const prepared = await preparing(async () => {
      const store = await prepareStore(deps.db, {
        deviceId: plan!.device.id, outputs: [...collected.outputs].map(([command, output]) => ({ command, text: storedText(output, template) })),
        significant: (command, t) => exclusions.strip(command, comparableText(t, template)), trigger: job.trigger, jobId: job.id, now,
      });
      // Only the prepared texts from here on: what the session printed can go.
      collected.outputs.clear();
      return store;
    });
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
