import { eq, sql } from "drizzle-orm";
import type { Db } from "../src/db/client.ts";
import { preparedPerDatabase } from "../src/db/prepared.ts";
import {
  commandCategories,
  commands,
  compareExclusions,
  configs,
  credentials,
  devices,
  templates,
} from "../src/db/schema/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { recordBackupEnd } from "./backup-events.ts";
import type { ExclusionRule } from "../src/modules/configs/index.ts";
import { markLatestSeen } from "../src/modules/configs/index.ts";
import type { SecretBox } from "../src/platform/secrets/box.ts";
import { collect, untilAborted, type Plan, type Progress } from "./collect.ts";
import { describeError } from "./errors.ts";
import { sessionSettings } from "./collector-settings.ts";
import { SessionError } from "./session.ts";
import { slots } from "./slots.ts";
import { Transcript } from "./transcript.ts";
import { configChangedColumns, snmpPrecheck, snmpResult, type SnmpPrecheck } from "./snmp.ts";
import { LeaseLost, storeDownload, type JobEnd, type StoreRequest } from "./store-download.ts";
import { parseTemplateOnce } from "./template-cache.ts";
import { loginOf } from "./login.ts";
import { rediscoverDeviceCredentials } from "./credential-discovery.ts";
import type { DownloadDeps } from "./download-deps.ts";
import { inventoryOf } from "./detect-match.ts";

export { loginOf };
export type { DownloadDeps } from "./download-deps.ts";

/**
 * Downloads handed over to be stored at once; the others keep their texts until a place frees. 500 sessions
 * finishing together, all storing at once, took the collector past 700 MB. The store thread stores the
 * downloads waiting in one transaction (storeDownloads), so the places bound that batch too. Sixteen took the
 * collector to 423 MB at 500 sessions (bench:collect; 390 MB with four) for no measurable gain in bench:task, since
 * a session hands its slot back once its output has a place.
 */
export const storing = slots(4);

/** A job's plan, its template's text, the compare exclusions its outputs are digested with, and the hashes they are compared with. */
export type LoadedPlan = {
  plan: Plan;
  templateCode: string;
  exclusions: ExclusionRule[];
  storedHashes: Record<string, string>;
};

/**
 * The device, its template, its login, the commands its category runs, the compare exclusions and the hashes
 * its outputs are compared with: one query, since each statement costs the collector more than its rows, and
 * built once per database (drizzle took 0.25 ms to build it for every job).
 */
const planQuery = preparedPerDatabase((db) =>
  db
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
    .prepare(),
);

export async function loadPlan(db: Db, secrets: SecretBox, deviceId: number): Promise<LoadedPlan> {
  const [row] = await planQuery(db).execute({ deviceId });
  if (!row) throw new SessionError("error", `device ${deviceId} no longer exists`);
  const { device, cred } = row;
  if (!device.templateId)
    throw new SessionError("error", "the device has no connection template; set device_template_id");
  const parsed = row.templateCode === null ? undefined : parseTemplateOnce(row.templateCode);
  if (!parsed) throw new SessionError("error", `the device's connection template ${device.templateId} is missing`);
  // Saved before a check it now fails (a pattern with lookahead from before patterns ran in RE2): say which and why.
  if (!parsed.ok)
    throw new SessionError(
      "error",
      `the device's connection template ${device.templateId} is invalid: ${parsed.errors[0]!.message}; edit it`,
    );

  if (device.credId && !cred) throw new SessionError("error", `credential set ${device.credId} no longer exists`);
  const login = await loginOf(secrets, device, device.credId ? cred : null);
  const categoryCommands = JSON.parse(row.commands) as string[];
  return {
    plan: {
      device,
      template: parsed.template,
      login,
      commands: categoryCommands.length ? categoryCommands : parsed.template.commands,
    },
    templateCode: row.templateCode!,
    exclusions: JSON.parse(row.exclusions) as ExclusionRule[],
    storedHashes: JSON.parse(row.storedHashes) as Record<string, string>,
  };
}

/**
 * The serial and OS version a successful backup's outputs show (the template's detect patterns), and the model
 * when the device has none: the device's inventory follows its last backup. Nothing is written when the
 * backup did not run the template's detect command.
 */
async function recordInventory(deps: DownloadDeps, plan: Plan, outputs: [string, string][]): Promise<void> {
  const found = inventoryOf(plan.template.detect, outputs);
  if (!found || (!found.serial && !found.osVersion && !found.model)) return;
  await deps.db
    .update(devices)
    .set({
      ...(found.serial ? { serial: found.serial } : {}),
      ...(found.osVersion ? { osVersion: found.osVersion } : {}),
      ...(found.model && !plan.device.model ? { model: found.model.slice(0, 255) } : {}),
      inventoryAt: deps.clock.now(),
    })
    .where(eq(devices.id, plan.device.id));
}

/**
 * Runs one download job end to end: plan, SNMP check, session, then storing (storeDownload), or the failure
 * recorded. Each ending is written in one transaction guarded by the lease, so a job retried after its collector
 * died can never store the same download twice. Returns how the job ended, or undefined when its lease was lost
 * and nothing was recorded.
 */
export async function runDownloadJob(
  deps: DownloadDeps,
  job: Job,
  signal: AbortSignal,
  rediscovered = false,
): Promise<JobEnd | undefined> {
  const started = Date.now();
  /** What credential discovery found when it ran and found no set: said in the failure's message. */
  let discoveryProblem: string | undefined;
  let plan: Plan | undefined;
  let precheck: SnmpPrecheck | undefined;
  let transcript: Transcript | undefined;
  const progress: Progress = { connected: false };
  try {
    let loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
    plan = loaded.plan;
    // A device set to discover its credentials that has no set yet: find one before the first login.
    if (plan.device.discoverCredentials && !plan.device.credId && !rediscovered) {
      rediscovered = true;
      const found = await rediscoverDeviceCredentials(deps, plan.device, plan.template, signal);
      if (!found.cred) throw new SessionError("auth_failed", `credential discovery: ${found.problem}`);
      loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
      plan = loaded.plan;
    }
    precheck = await untilAborted(snmpPrecheck(deps, plan), signal);
    if (precheck.skip) {
      const { message, report } = precheck;
      const now = deps.clock.now();
      await deps.db.transaction(async (tx) => {
        // Seen unchanged: the latest versions count this check as a sighting, as an identical download would.
        const configIds = await markLatestSeen(tx, plan!.device.id, plan!.commands, now);
        const { recorded } = await finishJob(
          tx,
          job,
          deps.owner,
          {
            outcome: "unchanged",
            message,
            result: { duration_ms: Date.now() - started, verified_by: "snmp", config_ids: configIds, snmp: report },
          },
          now,
        );
        if (!recorded) throw new LeaseLost();
        await tx.update(devices).set({ status: "up", lastSeenAt: now }).where(eq(devices.id, plan!.device.id));
        await recordBackupEnd(tx, job, { outcome: "unchanged", message, retrying: false }, now);
      });
      return { outcome: "unchanged", message, retrying: false };
    }
    transcript = new Transcript(plan.template, plan.login, deps.onTranscriptLine);
    const collected = await collect({ plan, ...(await sessionSettings(deps)), transcript }, signal, progress);
    const request: StoreRequest = {
      job,
      owner: deps.owner,
      deviceId: plan.device.id,
      templateCode: loaded.templateCode,
      exclusions: loaded.exclusions,
      storedHashes: loaded.storedHashes,
      secretsDigestKey: deps.secrets.secretsDigestKey,
      outputs: collected.outputs,
      printed: collected.printed,
      skipped: collected.skipped,
      fingerprint: collected.fingerprint,
      snmp: snmpResult(precheck),
      configChanged: configChangedColumns(precheck),
      startedAt: started,
      now: deps.clock.now(),
    };
    const end = await storing(() => {
      deps.handedOver?.();
      return deps.store ? deps.store(request) : storeDownload(deps.db, request);
    });
    if (!end) throw new LeaseLost();
    await recordInventory(deps, plan, collected.outputs);
    return end;
  } catch (err) {
    if (err instanceof LeaseLost) {
      deps.logger.warn("lease lost; the job's results were discarded", { job: job.id });
      return undefined;
    }
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    if (!(err instanceof SessionError))
      deps.logger.error("download failed unexpectedly", { job: job.id, error: describeError(err) });
    // Credentials that stopped working on a device set to discover them: looked for once, then the download again.
    if (failure.outcome === "auth_failed" && plan?.device.discoverCredentials && !rediscovered && !signal.aborted) {
      const found = await rediscoverDeviceCredentials(deps, plan.device, plan.template, signal).catch(
        (again: unknown) => ({ cred: undefined, problem: failureReason(again) }),
      );
      if (found.cred) return runDownloadJob(deps, job, signal, true);
      discoveryProblem = found.problem;
    }
    const now = deps.clock.now();
    const kept = transcript?.text();
    const message =
      failure.outcome === "host_key_changed"
        ? `${failure.message}: POST /api/v1/devices/${job.deviceId}/host-key/reset`
        : discoveryProblem
          ? `${failure.message}; credential discovery: ${discoveryProblem}`
          : failure.message;
    return await deps.db.transaction(async (tx): Promise<JobEnd | undefined> => {
      const { recorded, retrying } = await finishJob(
        tx,
        job,
        deps.owner,
        {
          outcome: failure.outcome,
          message,
          result: {
            duration_ms: Date.now() - started,
            ...snmpResult(precheck),
            ...(failure.lastLines.length
              ? { last_lines: transcript ? failure.lastLines.map((l) => transcript!.mask(l)) : failure.lastLines }
              : {}),
            // The session as it went, for GET /devices/{id}/last-failure: what a person fixing the template or the device needs.
            ...(kept ? { transcript: kept } : {}),
          },
        },
        now,
      );
      if (!recorded) {
        deps.logger.warn("lease lost; the job's outcome was discarded", { job: job.id, outcome: failure.outcome });
        return undefined;
      }
      const end = { outcome: failure.outcome, message, retrying };
      await recordBackupEnd(tx, job, end, now);
      if (!plan) return end;
      const reachable = progress.connected || (failure.outcome !== "unreachable" && failure.outcome !== "timeout");
      await tx
        .update(devices)
        .set(reachable ? { status: "up", lastSeenAt: now } : { status: "unreachable" })
        .where(eq(devices.id, plan.device.id));
      return end;
    });
  }
}
