import { eq, sql } from "drizzle-orm";
import { credentials, devices, templates, vendors } from "../src/db/schema/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { recordActivity } from "../src/platform/audit/record.ts";
import { deviceRef, recordEvent } from "../src/platform/outbox/record.ts";
import { parseTemplate, type ConnectionTemplate } from "../src/modules/templates/index.ts";
import { inNetconf, inShell, onExecChannels, sessionProfileOf, type Progress } from "./collect.ts";
import { sessionSettings } from "./collector-settings.ts";
import {
  commandsToTry,
  hintedBy,
  proposalOf,
  rankTemplates,
  settled,
  type DetectCandidate,
  type DetectMatch,
  type Evidence,
} from "./detect-match.ts";
import type { DownloadDeps } from "./download-deps.ts";
import { loginOf } from "./login.ts";
import { describeError } from "./errors.ts";
import { cleanCommandOutput, SessionError, type SessionLimits, type SessionProfile } from "./session.ts";
import { readSnmpSystem, type SnmpSystem } from "./snmp.ts";
import type { JobEnd } from "./store-download.ts";
import { parseTemplateOnce } from "./template-cache.ts";
import { builtinTemplates, type BuiltinTemplate } from "./builtin-templates.ts";
import { Transcript } from "./transcript.ts";
import { removeSecrets } from "../src/modules/templates/index.ts";
import type { Login } from "./collect.ts";

/**
 * A detect job (POST /api/v1/devices/{id}/detect): log in with the device's credentials (a device without a
 * template over SSH, and over Telnet on port 23 when SSH is refused), enter enable mode when the credentials carry
 * an enable password and a family whose prompt or banner fits has one, read the banner, the prompt and the version
 * commands of the built-in templates (and SNMP's sysDescr and sysObjectID when the credentials have SNMP settings),
 * and propose the built-in template, vendor, model and OS version that fit (detect-match.ts). With `params.apply`
 * the device gets the template, vendor and model. Nothing is stored but the job's result.
 */

/** How much of the banner the result keeps. */
const BANNER_CHARS = 1000;

/** Any one of the patterns: the session waits for any built-in's prompt and answers any built-in's pager. */
const anyOf = (patterns: { test(line: string): boolean }[]) => ({
  test: (line: string) => patterns.some((p) => p.test(line)),
});

/**
 * How a device of unknown family is logged into: its own template's way when it has one, else SSH on its port or
 * 22. The user name prompt also takes "User Name:" (Cisco SMB switches ask again inside the SSH shell).
 */
export const PROBE = (
  parseTemplate(
    [
      "prompt: '[#>$%\\]] ?$'",
      "login: {username_prompt: '(?:[Uu]ser(?:name| Name)?|[Ll]ogin) ?: ?$'}",
      "commands: [show version]",
    ].join("\n"),
  ) as { ok: true; template: ConnectionTemplate }
).template;

/** The well-known Telnet port, where detection turns when the device refuses SSH. */
const TELNET_PORT = 23;

/** Whether the device took the SSH login but refused an interactive shell (exec-channel devices). */
const shellRefused = (err: unknown) =>
  err instanceof SessionError && err.message.startsWith("the device refused a shell");

/** Whether a connection failed because nothing listens there (SSH not offered), rather than a timeout or a login. */
const refused = (err: unknown) =>
  err instanceof SessionError && err.outcome === "unreachable" && err.message.includes("(ECONNREFUSED)");

function probeProfile(own: ConnectionTemplate, builtins: ConnectionTemplate[]): SessionProfile {
  const profiles = [own, ...builtins].filter((t) => t.prompt !== undefined).map((t) => sessionProfileOf(t, false));
  const pagers = profiles.flatMap((p) => (p.pager ? [p.pager.pattern] : []));
  return {
    prompt: anyOf(profiles.map((p) => p.prompt)),
    pager: { pattern: anyOf(pagers), answer: " " },
    lineEnding: own.line_ending,
  };
}

/**
 * A failure's last lines as a failed download keeps them: the login's secrets hidden wherever the device echoed
 * them, and secret rules applied. Which family the device is, is what detection is finding out, so each line
 * gets the rules of the first template (its own, then the built-ins) that finds a secret in it; one template's
 * only, and before the login's secrets, as rules may take another's `<secret hidden>` for a secret.
 */
export function maskedLines(lines: string[], templates: ConnectionTemplate[], login: Login | undefined): string[] {
  const transcript = new Transcript({ secrets: [] }, login ?? { username: "" });
  return lines.map((line) => {
    const ruled = templates.map((t) => removeSecrets(line, t.secrets)).find((masked) => masked !== line) ?? line;
    return transcript.mask(ruled);
  });
}

/** What a detection found: the job's result fields, the templates that fit and the one proposed, and the inventory read. */
export type Detection = {
  result: Record<string, unknown>;
  ranked: DetectMatch[];
  proposal: DetectMatch | undefined;
  model: string | null;
  osVersion: string | null;
  serial: string | null;
  hostname: string | null;
  protocol: string;
};

/**
 * Logs in to `device` as `own` says (PROBE for a device of unknown family), falling back to Telnet and exec
 * channels as the job's description says, and matches what it saw against every built-in template. Throws the
 * session's SessionError when the login fails (auth_failed, unreachable, ...). `masking` learns the templates
 * and login, for the caller's failure lines.
 */
/**
 * The device's host name as its prompt shows it: "r1#" is r1, "netkeep@mx1> " mx1, "RP/0/RSP0/CPU0:xr1#" xr1,
 * "admin@(bigip1)(cfg-sync ...)# " bigip1, "[admin@MikroTik] > " MikroTik; null when the prompt names none.
 */
export function hostnameOfPrompt(prompt: string): string | null {
  let s = prompt.trim().replace(/^\[/, "");
  if (s.includes("@")) s = s.slice(s.indexOf("@") + 1).replace(/^\(/, "");
  const colon = /^[\w/]+:/.exec(s);
  if (colon) s = s.slice(colon[0].length);
  return /^[A-Za-z0-9][\w.-]*/.exec(s)?.[0] ?? null;
}

/** What a detection compares with and how it opens its session: the database's built-ins, the session settings. */
export type DetectEnv = {
  builtins: BuiltinTemplate[];
  session: { limits: SessionLimits; connectTimeoutMs: number };
};

export async function detectEnvOf(deps: DownloadDeps): Promise<DetectEnv> {
  return { builtins: await builtinTemplates(deps.db), session: await sessionSettings(deps) };
}

export async function detectAt(
  env: DetectEnv,
  target: { device: typeof devices.$inferSelect; own: ConnectionTemplate; login: Login; snmp?: SnmpSystem },
  signal: AbortSignal,
  progress: Progress,
  masking: { templates: ConnectionTemplate[]; login?: Login } = { templates: [] },
): Promise<Detection> {
  const { device, own, login, snmp } = target;
  const shipped = env.builtins;
  const builtins = shipped.map((b) => b.template);
  const byKey = new Map(shipped.map((b) => [b.key, b.template]));
  const candidates: DetectCandidate[] = shipped.flatMap(({ id, key, template }) =>
    template.detect ? [{ id, key, vendor: template.vendor, detect: template.detect }] : [],
  );

  masking.templates = [own, ...builtins];
  masking.login = login;
  const settings = env.session;
  const profile = probeProfile(own, builtins);
  const detectOver = (template: ConnectionTemplate, target: typeof device) =>
    inShell({ device: target, template, login }, { ...settings, profile }, signal, progress, async (session) => {
      const seen: Evidence = {
        banner: session.greeting?.banner ?? "",
        prompt: session.greeting?.prompt ?? "",
        outputs: new Map(),
        sysDescr: snmp?.report.sys_descr,
        sysObjectId: snmp?.report.sys_object_id,
      };
      // Many devices say little before enable: the first likely family that has an enable step gives its way.
      const enable = login.enablePassword
        ? hintedBy(seen, candidates)
            .map((c) => byKey.get(c.key)?.enable)
            .find((e) => e !== undefined)
        : undefined;
      if (enable) await session.enable(login.enablePassword!, sessionProfileOf({ ...own, enable }, false).enable);
      // The commands of the likeliest families first; the first one whose output a specific family recognises ends the search.
      for (const command of commandsToTry(seen, candidates)) {
        // Asked the way the family whose command it is listens (TP-Link wants "\r\n").
        const ending =
          byKey.get(candidates.find((c) => c.detect.command === command)!.key)?.line_ending ?? own.line_ending;
        const ran = await session.withLineEnding(ending, () => session.runOptional(command));
        seen.outputs.set(command, "printed" in ran ? cleanCommandOutput(ran.printed, command) : "");
        if (settled({ ...seen, sysDescr: undefined, sysObjectId: undefined }, candidates)) break;
      }
      for (const line of template.teardown) session.send(line);
      return { seen, enabled: enable !== undefined };
    });
  // A device that offers no shell is asked on exec channels, the exec families' commands first.
  const overExec = () =>
    onExecChannels({ device, template: own, login }, settings, signal, progress, async (run) => {
      const seen: Evidence = {
        banner: "",
        prompt: "",
        outputs: new Map(),
        sysDescr: snmp?.report.sys_descr,
        sysObjectId: snmp?.report.sys_object_id,
      };
      const execFirst = [
        ...candidates.filter((c) => byKey.get(c.key)?.exec),
        ...candidates.filter((c) => !byKey.get(c.key)?.exec),
      ];
      for (const command of commandsToTry(seen, execFirst)) {
        seen.outputs.set(command, await run(command));
        if (settled({ ...seen, sysDescr: undefined, sysObjectId: undefined }, candidates)) break;
      }
      return { result: { seen, enabled: false } };
    });
  // A device that offers neither a shell nor exec channels a family recognises: the capabilities of its NETCONF hello.
  const overNetconf = async (exec: { seen: Evidence } | undefined) => {
    const { result: capabilities } = await inNetconf(
      { device, template: own, login },
      settings,
      signal,
      progress,
      async (client) => {
        await client.close();
        return client.capabilities;
      },
    );
    const seen: Evidence = {
      ...(exec?.seen ?? {
        banner: "",
        prompt: "",
        outputs: new Map(),
        sysDescr: snmp?.report.sys_descr,
        sysObjectId: snmp?.report.sys_object_id,
      }),
      capabilities,
    };
    return { result: { seen, enabled: false } };
  };
  let protocol: string = own.protocol;
  let channels: "shell" | "exec" | "netconf" = "shell";
  let shell;
  try {
    shell = await detectOver(own, device);
  } catch (err) {
    if (own.protocol === "ssh" && shellRefused(err)) {
      channels = "exec";
      let execFailure: unknown;
      shell = await overExec().catch((failure: unknown) => {
        if (!(failure instanceof SessionError)) throw failure;
        execFailure = failure;
        return undefined;
      });
      if (!shell || !proposalOf(rankTemplates(shell.result.seen, candidates))) {
        try {
          shell = await overNetconf(shell?.result);
          channels = "netconf";
          protocol = "netconf";
        } catch (netconfFailure) {
          // No NETCONF either: the exec channels' answer (or failure) says what the device is.
          if (!(netconfFailure instanceof SessionError) || signal.aborted) throw netconfFailure;
          if (!shell) throw execFailure;
        }
      }
    } else if (own.protocol === "ssh" && refused(err)) {
      // A device that refuses SSH may speak Telnet: on its well-known port, as a port override names the SSH one.
      protocol = "telnet";
      shell = await detectOver({ ...own, protocol: "telnet", port: TELNET_PORT }, { ...device, portOverride: null });
    } else {
      throw err;
    }
  }
  const evidence = { result: shell.result.seen };

  const ranked = rankTemplates(evidence.result, candidates);
  const proposal = proposalOf(ranked);
  const snmpIdentity = snmp?.identity;
  const model = proposal?.model ?? snmpIdentity?.model ?? null;
  const osVersion = proposal?.os_version ?? snmpIdentity?.version ?? null;
  const hostname = snmp?.report.sys_name || hostnameOfPrompt(evidence.result.prompt);
  const result = {
    protocol,
    channels,
    enabled: shell.result.enabled,
    ...(evidence.result.capabilities ? { netconf_capabilities: evidence.result.capabilities } : {}),
    banner: evidence.result.banner.slice(0, BANNER_CHARS),
    prompt: evidence.result.prompt,
    commands_run: [...evidence.result.outputs.keys()],
    proposal: proposal
      ? {
          template_id: proposal.template_id,
          template: proposal.template,
          vendor: proposal.vendor,
          model,
          os_version: osVersion,
          matched_by: proposal.matched_by,
        }
      : null,
    candidates: ranked,
    ...(snmp ? { snmp: snmp.report } : {}),
  };
  return { result, ranked, proposal, model, osVersion, serial: proposal?.serial ?? null, hostname, protocol };
}

export async function runDetectJob(deps: DownloadDeps, job: Job, signal: AbortSignal): Promise<JobEnd | undefined> {
  const started = Date.now();
  const progress: Progress = { connected: false };
  // What the catch masks a failure's last lines with, as far as the job got.
  const masking: { templates: ConnectionTemplate[]; login?: Login } = { templates: [] };
  let device: typeof devices.$inferSelect | undefined;
  let ran: DetectRun;
  try {
    const [row] = await deps.db
      .select({ device: devices, cred: credentials, code: templates.code })
      .from(devices)
      .leftJoin(credentials, eq(credentials.id, devices.credId))
      .leftJoin(templates, eq(templates.id, devices.templateId))
      .where(eq(devices.id, job.deviceId!));
    if (!row) throw new SessionError("error", `device ${job.deviceId} no longer exists`);
    device = row.device;
    const own = ownTemplateOf(row.code);
    const env = await detectEnvOf(deps);
    const snmp = await readSnmpSystem(deps, { device, template: own }, env.builtins);
    const login = await loginOf(deps.secrets, device, device.credId ? row.cred : null);
    ran = { found: await detectAt(env, { device, own, login, snmp }, signal, progress, masking) };
  } catch (err) {
    if (!(err instanceof SessionError))
      deps.logger.error("detection failed unexpectedly", { job: job.id, error: describeError(err) });
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    ran = {
      failure: { outcome: failure.outcome, message: failure.message },
      lastLines: maskedLines(failure.lastLines, masking.templates, masking.login),
    };
  }
  return recordDetection(deps, job, device, ran, Date.now() - started);
}

/** The template a detection logs in with: the device's own when it has a valid one, else PROBE. */
export function ownTemplateOf(code: string | null): ConnectionTemplate {
  const parsed = code === null ? undefined : parseTemplateOnce(code);
  return parsed?.ok ? parsed.template : PROBE;
}

/** What a detection session gave: what it found, or how it failed (its last lines already masked). */
export type DetectRun =
  | { found: Detection }
  | { failure: { outcome: JobEnd["outcome"]; message: string }; lastLines: string[] };

/**
 * Records a detection's end, wherever its session ran (here, or at a remote collector's site): applies the
 * proposal when the job asked for it, keeps the inventory it read, and finishes the job.
 */
export async function recordDetection(
  deps: Pick<DownloadDeps, "db" | "clock" | "owner">,
  job: Job,
  device: typeof devices.$inferSelect | undefined,
  ran: DetectRun,
  durationMs: number,
): Promise<JobEnd | undefined> {
  let end: JobEnd;
  let result: Record<string, unknown> = {};
  if ("failure" in ran || !device) {
    const failure = "failure" in ran ? ran.failure : { outcome: "error" as const, message: "no device" };
    end = { outcome: failure.outcome, retrying: false, message: failure.message };
    if ("lastLines" in ran && ran.lastLines.length) result = { last_lines: ran.lastLines };
  } else {
    const found = ran.found;
    const { proposal, ranked, model, osVersion } = found;
    result = { ...found.result, applied: false };
    if (!proposal) {
      const why = ranked.length
        ? `${ranked.map((r) => r.template).join(" and ")} fit equally; choose one`
        : "no built-in template recognised what the device printed";
      end = {
        outcome: "error",
        retrying: false,
        message: `${why}; the result shows the banner, prompt and commands run`,
      };
    } else {
      const what = `${proposal.template}${proposal.vendor ? ` (${proposal.vendor})` : ""}${model ? `, model ${model}` : ""}${osVersion ? `, OS ${osVersion}` : ""}`;
      const apply = job.params?.apply === true;
      if (apply)
        result.applied = await applyProposal(deps, job, device, {
          templateId: proposal.template_id,
          vendor: proposal.vendor,
          model,
        });
      // The inventory a detection reads is kept whether or not it applies the proposal.
      await deps.db
        .update(devices)
        .set({ serial: found.serial, osVersion: osVersion, hostname: found.hostname, inventoryAt: deps.clock.now() })
        .where(eq(devices.id, device.id));
      end = { outcome: "success", retrying: false, message: `${apply ? "set" : "proposes"} ${what}` };
    }
  }
  const { recorded } = await finishJob(
    deps.db,
    job,
    deps.owner,
    { outcome: end.outcome, message: end.message, result: { duration_ms: durationMs, ...result } },
    deps.clock.now(),
  );
  return recorded ? end : undefined;
}

/** Sets the device's template, and its vendor (a known vendor's name) and model where detection read them; recorded in the activity log. */
async function applyProposal(
  deps: Pick<DownloadDeps, "db" | "clock">,
  job: Job,
  device: typeof devices.$inferSelect,
  found: { templateId: number; vendor: string | null; model: string | null },
): Promise<boolean> {
  const now = deps.clock.now();
  const [vendor] = found.vendor
    ? await deps.db
        .select()
        .from(vendors)
        .where(eq(sql`lower(${vendors.name})`, found.vendor.toLowerCase()))
    : [];
  const update = {
    templateId: found.templateId,
    ...(vendor ? { vendorId: vendor.id } : {}),
    ...(found.model ? { model: found.model.slice(0, 255) } : {}),
  };
  // As the API names the fields in a device.updated event (src/modules/devices/service.ts).
  const changed = [
    ...(update.templateId !== device.templateId ? ["device_template_id"] : []),
    ...(update.vendorId !== undefined && update.vendorId !== device.vendorId
      ? ["device_vendor", "device_vendor_id"]
      : []),
    ...(update.model !== undefined && update.model !== device.model ? ["device_model"] : []),
  ];
  await deps.db.transaction(async (tx) => {
    await tx
      .update(devices)
      .set({ ...update, updatedAt: now })
      .where(eq(devices.id, device.id));
    const ref = changed.length ? await deviceRef(tx, device.id) : undefined;
    if (ref) await recordEvent(tx, "device.updated", { device: ref, changed }, now);
    await recordActivity(
      tx,
      { system: `template detection (job ${job.id})` },
      {
        action: "device.detect_apply",
        subjectType: "device",
        subjectId: device.id,
        before: {
          device_template_id: device.templateId,
          device_vendor_id: device.vendorId,
          device_model: device.model,
        },
        after: {
          device_template_id: update.templateId,
          device_vendor_id: update.vendorId ?? device.vendorId,
          device_model: update.model ?? device.model,
        },
      },
      now,
    );
  });
  return true;
}
