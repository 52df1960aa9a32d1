import { eq, inArray } from "drizzle-orm";
import type { Clock } from "../src/clock.ts";
import type { Db } from "../src/db/client.ts";
import { commandCategories, commands, credentials, devices, templates } from "../src/db/schema/index.ts";
import { completeJob, type Job } from "../src/jobs/queue.ts";
import type { Logger } from "../src/logger.ts";
import { markLatestSeen, storeConfig } from "../src/modules/configs/store.ts";
import { normalizeConfigText } from "../src/modules/configs/text.ts";
import { parseTemplate, type ConnectionTemplate } from "../src/modules/templates/template-schema.ts";
import { comparableText, storedText } from "../src/modules/templates/template-text.ts";
import type { SecretBox } from "../src/secrets/box.ts";
import { DEFAULT_LIMITS, SessionError, ShellSession, type SessionLimits, type SessionProfile } from "./session.ts";
import { configChangedColumns, snmpPrecheck, snmpResult, type SnmpPrecheck } from "./snmp.ts";
import { openTelnet } from "./transports/telnet.ts";
import { SshConnection } from "./transports/ssh.ts";

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

/** The device, its template, its login and the commands its category runs: everything a session needs. */
async function loadPlan(db: Db, secrets: SecretBox, deviceId: number) {
  const [device] = await db.select().from(devices).where(eq(devices.id, deviceId));
  if (!device) throw new SessionError("error", `device ${deviceId} no longer exists`);
  if (!device.templateId) throw new SessionError("error", "the device has no connection template; set device_template_id");
  const [templateRow] = await db.select().from(templates).where(eq(templates.id, device.templateId));
  const parsed = templateRow ? parseTemplate(templateRow.code) : undefined;
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
  for (const command of plan.commands) outputs.set(command, normalizeConfigText(await session.run(command)));
  for (const line of template.teardown) session.send(line);
  return outputs;
}

async function collectOverSsh(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal) {
  const { template, device, login } = plan;
  const conn = await SshConnection.connect({
    host: device.ip, port: device.portOverride ?? template.port, username: login.username, password: login.password,
    privateKey: login.privateKey, passphrase: login.passphrase, legacyAlgorithms: template.legacy_algorithms,
    pinnedFingerprint: device.hostKeyFingerprint, connectTimeoutMs,
  });
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

async function collectOverTelnet(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal) {
  const { template, device, login } = plan;
  const channel = await openTelnet({ host: device.ip, port: device.portOverride ?? template.port, connectTimeoutMs });
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

/** Logs in over the template's protocol and returns each command's cleaned output. */
async function collect(plan: Plan, limits: SessionLimits, connectTimeoutMs: number, signal: AbortSignal): Promise<{ outputs: Map<string, string>; fingerprint?: string }> {
  try {
    return plan.template.protocol === "telnet"
      ? await collectOverTelnet(plan, limits, connectTimeoutMs, signal)
      : await collectOverSsh(plan, limits, connectTimeoutMs, signal);
  } catch (err) {
    if (signal.aborted) throw new SessionError("timeout", String(signal.reason ?? "the job ran past its time limit"));
    throw err;
  }
}

/**
 * Runs one download job end to end. Everything the job produces (config versions, device state, the job's
 * outcome) is written in one transaction guarded by the lease, so a job retried after its collector died can
 * never store the same download twice.
 */
export async function runDownloadJob(deps: DownloadDeps, job: Job, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  const limits = deps.limits ?? DEFAULT_LIMITS;
  let plan: Plan | undefined;
  let precheck: SnmpPrecheck | undefined;
  try {
    plan = await loadPlan(deps.db, deps.secrets, job.deviceId!);
    precheck = await snmpPrecheck(deps, plan);
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
      return;
    }
    const { outputs, fingerprint } = await collect(plan, limits, deps.connectTimeoutMs ?? 20_000, signal);
    const template = plan.template;
    const now = deps.clock.now();
    await deps.db.transaction(async (tx) => {
      let changed = 0;
      let bytes = 0;
      const configIds: number[] = [];
      for (const [command, output] of outputs) {
        const text = storedText(output, template);
        bytes += new TextEncoder().encode(text).length;
        const stored = await storeConfig(tx, {
          deviceId: plan!.device.id, command, text, significant: (t) => comparableText(t, template),
          trigger: job.trigger, jobId: job.id, now,
        });
        configIds.push(stored.configId);
        if (stored.changed) changed++;
      }
      const { recorded } = await completeJob(tx, job, deps.owner, {
        outcome: changed ? "success" : "unchanged",
        message: changed ? `${changed} of ${outputs.size} command outputs changed` : "no configuration change",
        result: { duration_ms: Date.now() - started, bytes, commands: outputs.size, changed, config_ids: configIds, ...snmpResult(precheck) },
      }, now);
      if (!recorded) throw new LeaseLost();
      await tx.update(devices).set({
        status: "up", lastSeenAt: now, lastBackupAt: now, ...configChangedColumns(precheck!),
        ...(plan!.device.hostKeyFingerprint ? {} : { hostKeyFingerprint: fingerprint ?? null }),
      }).where(eq(devices.id, plan!.device.id));
    });
  } catch (err) {
    if (err instanceof LeaseLost) {
      deps.logger.warn("lease lost; the job's results were discarded", { job: job.id });
      return;
    }
    const failure = err instanceof SessionError ? err : new SessionError("error", err instanceof Error ? err.message : String(err));
    if (!(err instanceof SessionError)) deps.logger.error("download failed unexpectedly", { job: job.id, error: String(err) });
    const now = deps.clock.now();
    await deps.db.transaction(async (tx) => {
      const { recorded } = await completeJob(tx, job, deps.owner, {
        outcome: failure.outcome,
        message: failure.message,
        result: { duration_ms: Date.now() - started, ...(failure.lastLines.length ? { last_lines: failure.lastLines } : {}), ...snmpResult(precheck) },
      }, now);
      if (!recorded || !plan) return;
      const reachable = failure.outcome !== "unreachable" && failure.outcome !== "timeout";
      await tx.update(devices).set(reachable ? { status: "up", lastSeenAt: now } : { status: "unreachable" }).where(eq(devices.id, plan.device.id));
    });
  }
}

class LeaseLost extends Error {}
