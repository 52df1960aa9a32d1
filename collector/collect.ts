import { normalizeConfigText } from "../src/modules/configs/index.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";
import { compileTemplatePattern } from "../src/modules/templates/index.ts";
import { cleanCommandOutput, SessionError, ShellSession, type SessionLimits, type SessionProfile } from "./session.ts";
import { openTelnet } from "./transports/telnet.ts";
import type { Transcript } from "./transcript.ts";
import { SshConnection } from "./transports/ssh.ts";
import { NetconfClient } from "./netconf/client.ts";

export type { Login, Plan, Target } from "./plan.ts";
import type { Plan, Target } from "./plan.ts";

/**
 * A download's network half: log in over the template's protocol, run the commands, and bring back what they
 * printed. It needs no database: store-download.ts stores what it returns.
 */

/** All a session needs; `transcript` is told everything received and sent (collector/transcript.ts). */
export type CollectRequest = { plan: Plan; limits: SessionLimits; connectTimeoutMs: number; transcript?: Transcript };

/** An optional setup line or command that failed, and why: the job's result lists them. */
export type Skipped = { command: string; reason: string };

/**
 * What a session brought back: each command and its output (secrets still in), the optional commands it skipped,
 * and the host key it saw (SSH). The outputs of the commands in `printed` are what the shell printed, echo and
 * terminal codes included: where they are stored, outputText() cleans them; the others (exec channels, files) are
 * text already.
 */
export type Collected = {
  outputs: [command: string, output: string][];
  printed: string[];
  skipped: Skipped[];
  fingerprint?: string;
};

/** What one session produced, before it is flattened into Collected. */
type SessionOutputs = { outputs: Map<string, string>; printed: string[]; skipped: Skipped[] };

/** What a failed download got as far as: a device that answered is up, whatever went wrong afterwards. */
export type Progress = { connected: boolean };

/** The template's prompts and pager as patterns (template-patterns.ts: RE2, or JavaScript's engine for shipped ones). */
export function sessionProfileOf(t: ConnectionTemplate, withLogin: boolean): SessionProfile {
  const line = (source: string) => compileTemplatePattern(source, "line");
  return {
    // No prompt (exec templates): a pattern that never matches a line.
    prompt: t.prompt === undefined ? { test: () => false } : line(t.prompt),
    pager: t.pager && { pattern: line(t.pager.pattern), answer: t.pager.answer },
    login: withLogin
      ? { usernamePrompt: line(t.login.username_prompt), passwordPrompt: line(t.login.password_prompt) }
      : undefined,
    enable: t.enable && {
      command: t.enable.command,
      passwordPrompt: line(t.enable.password_prompt),
      prompt: t.enable.prompt === undefined ? undefined : line(t.enable.prompt),
    },
    lineEnding: t.line_ending,
  };
}

/**
 * Runs the setup and the commands in an interactive CLI session, and returns what the shell printed for each command.
 * An optional line that fails is skipped (a category's command counts as optional when the template marks it so).
 * A template's `{scp: path}` command fetches its file on an exec channel beside the shell (`fetchFile`, SSH only).
 */
async function runShell(session: ShellSession, plan: Plan, fetchFile?: FetchFile): Promise<SessionOutputs> {
  const { template, login } = plan;
  const refusals = refusalPatterns(template);
  if (template.enable && login.enablePassword) await session.enable(login.enablePassword);
  const skipped: Skipped[] = [];
  /** The commands whose output is what the shell printed (not a file fetched beside it). */
  const printed = new Set<string>();
  const run = async (command: string): Promise<string | undefined> => {
    const path = scpPathOf(template, command);
    if (path !== undefined && fetchFile)
      return fetchOrSkip(fetchFile, command, path, template.optional.includes(command), skipped);
    printed.add(command);
    if (!template.optional.includes(command)) return session.print(command);
    const ran = await session.runOptional(command);
    const refusal = "printed" in ran ? refusalIn(refusals, cleanCommandOutput(ran.printed, command)) : undefined;
    if ("printed" in ran && refusal === undefined) return ran.printed;
    skipped.push({ command, reason: "printed" in ran ? refusedReason(refusal!) : ran.error.message });
    return undefined;
  };
  for (const line of template.setup) await run(line);
  const outputs = new Map<string, string>();
  for (const command of plan.commands) {
    const output = await run(command);
    if (output !== undefined) outputs.set(command, output);
  }
  for (const line of template.teardown) session.send(line);
  return { outputs, printed: [...outputs.keys()].filter((command) => printed.has(command)), skipped };
}

/**
 * How the device says it refused a command: the template's push.errors (`% Invalid input detected at '^' marker`
 * on IOS), the same refusal a pushed line meets. An optional command the device refuses is skipped and stores
 * nothing: its output is the refusal, not something the device has (show vtp status on a switch without VTP).
 */
const refusalPatterns = (template: ConnectionTemplate) =>
  (template.push?.errors ?? []).map((source) => compileTemplatePattern(source, "line"));
const refusalIn = (patterns: { test(line: string): boolean }[], output: string): string | undefined =>
  patterns.length
    ? output
        .split("\n")
        .map((l) => l.replace(/\r$/, ""))
        .find((line) => patterns.some((p) => p.test(line)))
    : undefined;
const refusedReason = (line: string) => `the device refused it: ${line.trim().slice(0, 200)}`;

/** The file a command fetches over SCP (`{scp: path}` in the template), if it is one; own keys only ("constructor"). */
const scpPathOf = (template: ConnectionTemplate, command: string): string | undefined =>
  Object.hasOwn(template.scp, command) ? template.scp[command] : undefined;

/** Fetches a file from the device (SCP over the SSH connection); `optional` gives it the short silence limit. */
type FetchFile = (path: string, optional: boolean) => Promise<string>;

/** A template's `{scp: path}` command: the file's text, or, for an optional one that failed, a skipped entry. */
async function fetchOrSkip(
  fetchFile: FetchFile,
  command: string,
  path: string,
  optional: boolean,
  skipped: Skipped[],
): Promise<string | undefined> {
  try {
    return normalizeConfigText(await fetchFile(path, optional));
  } catch (err) {
    if (!optional || !(err instanceof SessionError)) throw err;
    skipped.push({ command, reason: err.message });
    return undefined;
  }
}

/**
 * Runs `work` on an open connection, closing it when the work ends or the job is given up. The job may have been
 * given up while the connection was opening (see untilAborted): then it is nobody's and is closed at once.
 */
async function whileOpen<T>(
  connection: { close(): void },
  signal: AbortSignal,
  progress: Progress,
  work: () => Promise<T>,
): Promise<T> {
  if (signal.aborted) {
    connection.close();
    throw abortError(signal);
  }
  progress.connected = true;
  const onAbort = () => connection.close();
  signal.addEventListener("abort", onAbort);
  try {
    return await work();
  } finally {
    signal.removeEventListener("abort", onAbort);
    connection.close();
  }
}

async function collectOverSsh(
  { plan, limits, connectTimeoutMs, transcript }: CollectRequest,
  signal: AbortSignal,
  progress: Progress,
) {
  const { template } = plan;
  const conn = await sshConnect(plan, connectTimeoutMs);
  const fetchFile: FetchFile = (path, optional) =>
    conn.fetchFile(
      path,
      optional ? Math.min(limits.optionalIdleTimeoutMs, limits.idleTimeoutMs) : limits.idleTimeoutMs,
      limits.maxOutputBytes,
    );
  return whileOpen(conn, signal, progress, async () => {
    if (template.exec) {
      const outputs = new Map<string, string>();
      const skipped: Skipped[] = [];
      const refusals = refusalPatterns(template);
      // Each exec channel ends on its own, so an optional command that fails leaves nothing behind to resync.
      const exec = async (command: string, idleTimeoutMs: number) => {
        transcript?.sent(command);
        const output = await conn.exec(command, idleTimeoutMs, limits.maxOutputBytes);
        transcript?.received(output.endsWith("\n") ? output : `${output}\n`);
        return output;
      };
      const run = async (command: string): Promise<string | undefined> => {
        const path = scpPathOf(template, command);
        if (path !== undefined)
          return fetchOrSkip(fetchFile, command, path, template.optional.includes(command), skipped);
        if (!template.optional.includes(command)) return exec(command, limits.idleTimeoutMs);
        try {
          const output = await exec(command, Math.min(limits.optionalIdleTimeoutMs, limits.idleTimeoutMs));
          const refusal = refusalIn(refusals, output);
          if (refusal === undefined) return output;
          skipped.push({ command, reason: refusedReason(refusal) });
          return undefined;
        } catch (err) {
          if (!(err instanceof SessionError)) throw err;
          skipped.push({ command, reason: err.message });
          return undefined;
        }
      };
      for (const line of template.setup) await run(line);
      for (const command of plan.commands) {
        const output = await run(command);
        if (output !== undefined) outputs.set(command, normalizeConfigText(output));
      }
      return { outputs, printed: [], skipped, fingerprint: conn.fingerprint };
    }
    return {
      ...(await runShell(await shellOver(conn, plan, limits, undefined, transcript), plan, fetchFile)),
      fingerprint: conn.fingerprint,
    };
  });
}

/**
 * An SSH shell channel at its first prompt. Some devices accept any SSH login and then ask for the user name and
 * password again inside the shell (Cisco AireOS controllers, Cisco SMB switches without "ip ssh password-auth"):
 * the template's login prompts are answered when they come before the prompt, as over Telnet; a device that shows
 * its prompt first is sent nothing. `profile` replaces the template's prompts (detection), never its login prompts.
 */
async function shellOver(
  conn: SshConnection,
  target: Target,
  limits: SessionLimits,
  profile?: SessionProfile,
  transcript?: Transcript,
): Promise<ShellSession> {
  const own = sessionProfileOf(target.template, true);
  const session = new ShellSession(
    await conn.shell(),
    profile ? { ...profile, login: own.login } : own,
    limits,
    transcript,
  );
  await session.login(target.login.username, target.login.password ?? "");
  return session;
}

function sshConnect(target: Target, connectTimeoutMs: number): Promise<SshConnection> {
  const { template, device, login } = target;
  return SshConnection.connect({
    host: device.ip,
    port: device.portOverride ?? template.port,
    username: login.username,
    password: login.password,
    privateKey: login.privateKey,
    passphrase: login.passphrase,
    legacyAlgorithms: template.legacy_algorithms,
    pinnedFingerprint: device.hostKeyFingerprint,
    connectTimeoutMs,
  });
}

/** Telnet, logged in at the first prompt. */
async function telnetShell<T>(
  target: Target,
  limits: SessionLimits,
  connectTimeoutMs: number,
  signal: AbortSignal,
  progress: Progress,
  work: (session: ShellSession) => Promise<T>,
  profile = sessionProfileOf(target.template, true),
  transcript?: Transcript,
): Promise<T> {
  const { template, device, login } = target;
  const channel = await openTelnet({ host: device.ip, port: device.portOverride ?? template.port, connectTimeoutMs });
  return whileOpen(channel, signal, progress, async () => {
    const session = new ShellSession(channel, profile, limits, transcript);
    await session.login(login.username, login.password ?? "");
    return await work(session);
  });
}

async function collectOverTelnet(
  { plan, limits, connectTimeoutMs, transcript }: CollectRequest,
  signal: AbortSignal,
  progress: Progress,
) {
  return {
    ...(await telnetShell(
      plan,
      limits,
      connectTimeoutMs,
      signal,
      progress,
      (session) => runShell(session, plan),
      undefined,
      transcript,
    )),
    fingerprint: undefined,
  };
}

/**
 * A NETCONF template's session: the SSH `netconf` subsystem, hellos, `<get-config>` of running, `<close-session>`.
 * The answer goes back whole, as text: where it is stored it becomes canonical XML with its secrets out
 * (store-download.ts), as a shell's output is cleaned there. The category's commands do not apply: NETCONF has one.
 */
async function collectOverNetconf(
  { plan, limits, connectTimeoutMs, transcript }: CollectRequest,
  signal: AbortSignal,
  progress: Progress,
) {
  const { template } = plan;
  const { result, fingerprint } = await inNetconf(
    plan,
    { limits, connectTimeoutMs, transcript },
    signal,
    progress,
    async (client) => {
      const reply = await client.getConfig(template.netconf?.filter);
      await client.close();
      return reply;
    },
  );
  return { outputs: new Map([[template.config_command, result]]), printed: [], skipped: [], fingerprint };
}

/**
 * Runs `work` in a NETCONF session with the device (SSH `netconf` subsystem, hellos exchanged); the connection is
 * closed when the work ends or the job is given up. Returns the work's result and the host key seen.
 */
export async function inNetconf<T>(
  target: Target,
  request: { limits: SessionLimits; connectTimeoutMs: number; transcript?: Transcript },
  signal: AbortSignal,
  progress: Progress,
  work: (client: NetconfClient) => Promise<T>,
): Promise<{ result: T; fingerprint: string }> {
  const { limits, connectTimeoutMs, transcript } = request;
  try {
    return await untilAborted(
      (async () => {
        const conn = await sshConnect(target, connectTimeoutMs);
        return whileOpen(conn, signal, progress, async () => {
          const client = await NetconfClient.open(
            await conn.subsystem("netconf"),
            { idleTimeoutMs: limits.idleTimeoutMs, maxMessageBytes: limits.maxOutputBytes },
            transcript,
          );
          return { result: await work(client), fingerprint: conn.fingerprint };
        });
      })(),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
}

/**
 * Runs `work` in an interactive shell on the device, logged in and at its first prompt, over the template's
 * protocol; a shell even for exec templates (a push needs one session for configuration mode). The connection is
 * closed when the work ends or the job is given up. Returns the work's result and the host key seen (SSH).
 * `profile` replaces the one the template gives (detection, which does not know the family yet, waits for any
 * built-in's prompt).
 */
export async function inShell<T>(
  target: Target,
  request: { limits: SessionLimits; connectTimeoutMs: number; profile?: SessionProfile },
  signal: AbortSignal,
  progress: Progress,
  work: (session: ShellSession) => Promise<T>,
): Promise<{ result: T; fingerprint?: string }> {
  const { limits, connectTimeoutMs, profile } = request;
  try {
    return await untilAborted(
      (async (): Promise<{ result: T; fingerprint?: string }> => {
        if (target.template.protocol === "telnet") {
          return {
            result: await telnetShell(
              target,
              limits,
              connectTimeoutMs,
              signal,
              progress,
              work,
              profile && { ...profile, login: sessionProfileOf(target.template, true).login },
            ),
          };
        }
        const conn = await sshConnect(target, connectTimeoutMs);
        return whileOpen(conn, signal, progress, async () => ({
          result: await work(await shellOver(conn, target, limits, profile)),
          fingerprint: conn.fingerprint,
        }));
      })(),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
}

/**
 * Runs `work` with a way to run commands, each on its own exec channel of one SSH connection (detection of a device
 * that refuses an interactive shell). A command that fails or stays silent past the optional-command limit gives "".
 */
export async function onExecChannels<T>(
  target: Target,
  request: { limits: SessionLimits; connectTimeoutMs: number },
  signal: AbortSignal,
  progress: Progress,
  work: (run: (command: string) => Promise<string>) => Promise<T>,
): Promise<T> {
  const { limits, connectTimeoutMs } = request;
  try {
    return await untilAborted(
      (async () => {
        const conn = await sshConnect(target, connectTimeoutMs);
        return whileOpen(conn, signal, progress, () =>
          work(async (command) => {
            try {
              return normalizeConfigText(
                await conn.exec(
                  command,
                  Math.min(limits.optionalIdleTimeoutMs, limits.idleTimeoutMs),
                  limits.maxOutputBytes,
                ),
              );
            } catch (err) {
              if (!(err instanceof SessionError)) throw err;
              return "";
            }
          }),
        );
      })(),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
}

export const abortError = (signal: AbortSignal) =>
  new SessionError("timeout", String(signal.reason ?? "the job ran past its time limit"));

/**
 * Settles with the work, or fails as soon as the signal fires, whatever the work is waiting for (a handshake
 * with its own, longer timeout, an SNMP request): the job's time limit holds for every step. Work left behind
 * cleans up after itself (collectOverSsh closes a connection that completes after the abort).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
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

/**
 * Logs in over the template's protocol and returns each command's output (Collected). Whether the configuration
 * command's output can be a configuration is checked where it is stored (store-download.ts).
 */
export async function collect(request: CollectRequest, signal: AbortSignal, progress: Progress): Promise<Collected> {
  const { plan } = request;
  try {
    const { outputs, printed, skipped, fingerprint } = await untilAborted<SessionOutputs & { fingerprint?: string }>(
      plan.template.protocol === "telnet"
        ? collectOverTelnet(request, signal, progress)
        : plan.template.protocol === "netconf"
          ? collectOverNetconf(request, signal, progress)
          : collectOverSsh(request, signal, progress),
      signal,
    );
    return { outputs: [...outputs], printed, skipped, fingerprint };
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
}
