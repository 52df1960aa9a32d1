import { and, eq } from "drizzle-orm";
import { credentials, jobs, snippetDeploymentDevices } from "../src/db/schema/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { unifiedDiff } from "../src/modules/configs/index.ts";
import { completePushJob, type PushEnd } from "../src/modules/snippets/index.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { storedText } from "../src/modules/templates/index.ts";
import { collect, type Progress } from "./collect.ts";
import { loadPlan, loginOf, storing, type DownloadDeps, type LoadedPlan } from "./download.ts";
import { describeError } from "./errors.ts";
import { keepLease } from "./lease.ts";
import { linesNotInConfig, pushLines, type PushOutcome } from "./push.ts";
import { sessionSettings } from "./collector-settings.ts";
import { SessionError } from "./session.ts";
import { LeaseLost, storeDownload, templateText, type StoreRequest } from "./store-download.ts";
import { snmpResult } from "./snmp.ts";

/** A configuration downloaded around a push: its stored text per command and the download job that stored it. */
export type Snapshot = { jobId: number; configIds: unknown; texts: Map<string, string> };

/**
 * The download job a configuration around a push is stored as (trigger `snippet`, so its versions say
 * change_trigger snippet), running under `owner` from `now`.
 */
export async function insertSnapshotJob(
  db: DownloadDeps["db"],
  deviceId: number,
  owner: string,
  leaseMs: number,
  now: Date,
): Promise<Job> {
  const [job] = await db
    .insert(jobs)
    .values({
      type: "download",
      deviceId,
      trigger: "snippet",
      state: "running",
      leaseOwner: owner,
      leaseExpiresAt: new Date(now.getTime() + leaseMs),
      attempts: 1,
      maxAttempts: 1,
      runAfter: now,
      createdAt: now,
      startedAt: now,
    })
    .returning();
  return job!;
}

/**
 * Downloads the device's configuration through the normal storage path, as a download job of its own (trigger
 * `snippet`, so its versions say change_trigger snippet) that this collector holds while it runs.
 */
async function snapshot(
  deps: DownloadDeps,
  loaded: LoadedPlan,
  leaseMs: number,
  signal: AbortSignal,
): Promise<Snapshot> {
  const job = await insertSnapshotJob(deps.db, loaded.plan.device.id, deps.owner, leaseMs, deps.clock.now());
  const started = Date.now();
  // Renewed like the push's own lease: a collector that dies leaves this job running for one lease at most, and
  // the device (whose jobs wait while one runs) free for the push's next claim, which reports the interruption.
  const leaseLost = new AbortController();
  const stopRenewing = keepLease(deps, job.id, leaseMs, () =>
    leaseLost.abort("the lease of the download before or after the push was lost"),
  );
  try {
    const collected = await collect(
      { plan: loaded.plan, ...(await sessionSettings(deps)) },
      AbortSignal.any([signal, leaseLost.signal]),
      { connected: false },
    );
    const request: StoreRequest = {
      job,
      owner: deps.owner,
      deviceId: loaded.plan.device.id,
      templateCode: loaded.templateCode,
      exclusions: loaded.exclusions,
      storedHashes: loaded.storedHashes,
      outputs: collected.outputs,
      printed: collected.printed,
      fingerprint: collected.fingerprint,
      snmp: snmpResult(undefined),
      configChanged: { snmpConfigChangedValue: null, snmpConfigChangedAt: null },
      startedAt: started,
      now: deps.clock.now(),
    };
    const end = await storing(() => (deps.store ? deps.store(request) : storeDownload(deps.db, request)));
    if (!end) throw new LeaseLost();
    const [stored] = await deps.db.select({ result: jobs.result }).from(jobs).where(eq(jobs.id, job.id));
    return {
      jobId: job.id,
      configIds: stored?.result?.config_ids ?? [],
      texts: new Map(
        collected.outputs.map(([command, output]) => [
          command,
          storedText(templateText(collected, loaded.plan.template, command, output), loaded.plan.template),
        ]),
      ),
    };
  } catch (err) {
    await deps.db
      .update(jobs)
      .set({
        state: "finished",
        outcome: err instanceof SessionError ? err.outcome : "error",
        message: failureReason(err).slice(0, 500),
        finishedAt: deps.clock.now(),
        leaseOwner: null,
        leaseExpiresAt: null,
      })
      .where(and(eq(jobs.id, job.id), eq(jobs.leaseOwner, deps.owner)));
    throw err;
  } finally {
    stopRenewing();
  }
}

/** The pushed lines missing from the configuration after (templates with push.verify_lines; [] for the others). */
function configLinesMissing(loaded: Pick<LoadedPlan, "plan">, lines: string[], after: Snapshot): string[] {
  const { template } = loaded.plan;
  const command = template.config_command ?? template.commands[0]!;
  return linesNotInConfig(template, lines, after.texts.get(command) ?? "");
}

/**
 * Runs one device's push of a snippet deployment: the configuration before, the push with the device's snippet
 * credentials (its primary ones when it has none), the configuration after, and the diff; then the job's
 * outcome, the device's result and the deployment's next pushes in one transaction. A push is never retried: a
 * job claimed again after its collector died ends with an error instead of sending the lines a second time.
 */
export async function runSnippetJob(
  deps: DownloadDeps,
  job: Job,
  leaseMs: number,
  signal: AbortSignal,
): Promise<PushEnd | undefined> {
  const started = Date.now();
  const finish = async (end: PushEnd) =>
    (await completePushJob(deps.db, job, deps.owner, end, deps.clock.now(), finishJob)) ? end : undefined;
  const target = await pushTargetOf(deps.db, job);
  if ("refused" in target) return finish(target.refused);
  let before: Snapshot | undefined;
  try {
    const loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
    const { device } = loaded.plan;
    const login = await pushLoginOf(deps, loaded);
    before = await snapshot(deps, loaded, leaseMs, signal);
    const progress: Progress = { connected: false };
    const pushed = await pushLines(
      { target: { device, template: loaded.plan.template, login }, ...(await sessionSettings(deps)) },
      {
        lines: target.lines,
        rollbackLines: target.rollbackLines.length ? target.rollbackLines : undefined,
        save: true,
      },
      signal,
      progress,
    );
    // After any push that reached the device, what it holds now: a failed push may have taken some lines.
    let afterError: string | undefined;
    const after = progress.connected
      ? await snapshot(deps, loaded, leaseMs, signal).catch((err) => {
          if (err instanceof LeaseLost) throw err;
          afterError = failureReason(err).slice(0, 500);
          return undefined;
        })
      : undefined;
    return await finish(pushEnd(loaded, target.lines, pushed, { before, after, afterError }, Date.now() - started));
  } catch (err) {
    if (err instanceof LeaseLost) {
      deps.logger.warn("lease lost; the push's result was discarded", { job: job.id });
      return undefined;
    }
    if (!(err instanceof SessionError))
      deps.logger.error("push failed unexpectedly", { job: job.id, error: describeError(err) });
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    // Failing before the push (the download before it, the plan) sends nothing.
    return finish(pushFailure(failure, before, Date.now() - started));
  }
}

/** A push that failed before the device took anything (or whose download before it failed): nothing was sent. */
export function pushFailure(
  failure: { outcome: PushEnd["outcome"]; message: string },
  before: Pick<Snapshot, "jobId"> | undefined,
  durationMs: number,
): PushEnd {
  return {
    status: "error",
    outcome: failure.outcome,
    transcript: "",
    message: `${before ? "" : "nothing was pushed: "}${failure.message}`,
    result: { duration_ms: durationMs, ...(before ? { before_job_id: before.jobId } : {}) },
  };
}

/**
 * The lines a push job sends, or why it must end without sending anything: its deployment was deleted, or an
 * earlier attempt was interrupted (a push is never sent twice).
 */
export async function pushTargetOf(
  db: DownloadDeps["db"],
  job: Job,
): Promise<{ lines: string[]; rollbackLines: string[] } | { refused: PushEnd }> {
  const refused = (message: string) => ({
    refused: { status: "error" as const, outcome: "error" as const, message, result: {}, transcript: "" },
  });
  const [target] = await db
    .select()
    .from(snippetDeploymentDevices)
    .where(eq(snippetDeploymentDevices.id, Number(job.params?.deployment_device_id)));
  if (!target) return refused("the deployment was deleted");
  if (job.attempts > 1)
    return refused(
      "an earlier attempt of this push was interrupted (its collector stopped); the lines were not sent again: check the device, then send again",
    );
  return { lines: target.lines, rollbackLines: target.rollbackLines };
}

/** The login a push uses: the device's snippet credential set when it has one, else its primary login. */
export async function pushLoginOf(deps: Pick<DownloadDeps, "db" | "secrets">, loaded: LoadedPlan) {
  const { device } = loaded.plan;
  if (!device.snippetCredId) return loaded.plan.login;
  const [cred] = await deps.db.select().from(credentials).where(eq(credentials.id, device.snippetCredId));
  if (!cred) throw new SessionError("error", `snippet credential set ${device.snippetCredId} no longer exists`);
  return loginOf(deps.secrets, device, cred);
}

/**
 * How a push that reached the session stage ended: its outcome, the downloads before and after it, their diff
 * and the pushed lines missing from the configuration after. Shared by the local run and a remote collector's.
 */
export function pushEnd(
  loaded: Pick<LoadedPlan, "plan">,
  lines: string[],
  pushed: Pick<PushOutcome, "status" | "outcome" | "message" | "saved" | "failedLine" | "rolledBack" | "transcript">,
  around: { before: Snapshot; after: Snapshot | undefined; afterError?: string },
  durationMs: number,
): PushEnd {
  const { before, after, afterError } = around;
  const result: Record<string, unknown> = {
    duration_ms: durationMs,
    saved: pushed.saved,
    before_job_id: before.jobId,
    before_config_ids: before.configIds,
    ...(pushed.failedLine ? { failed_line: pushed.failedLine } : {}),
    ...(pushed.rolledBack !== undefined ? { rolled_back: pushed.rolledBack } : {}),
    ...(afterError !== undefined ? { after_error: afterError } : {}),
  };
  if (after) {
    const commands = [...new Set([...before.texts.keys(), ...after.texts.keys()])];
    const diff = commands
      .map((c) => unifiedDiff(before.texts.get(c) ?? "", after.texts.get(c) ?? "", `${c} (before)`, `${c} (after)`))
      .filter((d) => d.added || d.removed);
    Object.assign(result, {
      after_job_id: after.jobId,
      after_config_ids: after.configIds,
      diff: diff.map((d) => d.text).join(""),
      lines_added: diff.reduce((n, d) => n + d.added, 0),
      lines_removed: diff.reduce((n, d) => n + d.removed, 0),
      ...(pushed.status === "success" ? { lines_not_in_config: configLinesMissing(loaded, lines, after) } : {}),
    });
  }
  return {
    status: pushed.status,
    outcome: pushed.status === "success" ? "success" : (pushed.outcome ?? "error"),
    message: pushed.message,
    result,
    transcript: pushed.transcript,
  };
}
