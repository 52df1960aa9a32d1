import { randomUUID } from "node:crypto";
import type { Collected, ResultUpload, WireJob } from "../../src/runtime/collector-api/index.ts";
import { failureReason } from "../../src/kernel/error-reason.ts";
import { open } from "../../src/platform/secrets/sealed-box.ts";
import type { ConnectionTemplate } from "../../src/modules/templates/index.ts";
import { collect, type Login, type Plan, type Progress } from "../collect.ts";
import { pushLines } from "../push.ts";
import type { SessionLimits } from "../session.ts";
import { SessionError } from "../session.ts";
import { parseTemplateOnce } from "../template-cache.ts";
import { deviceOf, digestKeyOf, maskedOutputs } from "./run-download.ts";

type Session = { limits: SessionLimits; connectTimeoutMs: number };

/** One download around the push, masked at the site as a backup is. */
async function snapshot(
  plan: Plan,
  digestKey: Uint8Array | undefined,
  session: Session,
  signal: AbortSignal,
): Promise<Collected> {
  const started = Date.now();
  const collected = await collect({ plan, ...session }, signal, { connected: false });
  return {
    ...maskedOutputs(collected, plan.template, digestKey),
    ...(collected.skipped.length ? { skipped: collected.skipped } : {}),
    ...(collected.fingerprint ? { fingerprint: collected.fingerprint } : {}),
    duration_ms: Date.now() - started,
  };
}

/**
 * Runs one snippet push at the site as the local collector does (snippet-job.ts): the configuration before, the
 * push with the push's login (the snippet credential set's, else the device's), and the configuration after any
 * push that reached the device. Both logins come sealed and live only in this call's memory; the downloads are
 * masked like backups and the push's transcript by its own masking (push.ts), so no secret leaves the site.
 * The server stores the downloads as their own jobs, diffs them and settles the deployment (store-push.ts).
 */
export async function runRemotePush(
  job: WireJob,
  keyPair: { publicKey: string; privateKey: string },
  session: Session,
  signal: AbortSignal,
): Promise<ResultUpload> {
  const started = Date.now();
  const upload_key = randomUUID();
  try {
    const parsed = job.template_code === null ? undefined : parseTemplateOnce(job.template_code);
    if (!parsed?.ok) throw new SessionError("error", "the device's connection template is missing or invalid; edit it");
    if (!job.push) throw new SessionError("error", "the job carries no lines to push");
    const template: ConnectionTemplate = parsed.template;
    const device = deviceOf(job.device);
    const plan: Plan = {
      device,
      template,
      login: JSON.parse(open(keyPair, job.sealed_login)) as Login,
      commands: job.commands,
    };
    const pushLogin = JSON.parse(open(keyPair, job.push.sealed_login)) as Login;
    const digestKey = digestKeyOf(job, keyPair);
    const before = await snapshot(plan, digestKey, session, signal);
    const progress: Progress = { connected: false };
    const pushed = await pushLines(
      { target: { device, template, login: pushLogin }, ...session },
      {
        lines: job.push.lines,
        rollbackLines: job.push.rollback_lines.length ? job.push.rollback_lines : undefined,
        save: true,
      },
      signal,
      progress,
    );
    let after: Collected | undefined;
    let afterError: string | undefined;
    // After any push that reached the device, what it holds now: a failed push may have taken some lines.
    if (progress.connected)
      after = await snapshot(plan, digestKey, session, signal).catch((err: unknown) => {
        afterError = failureReason(err).slice(0, 500);
        return undefined;
      });
    return {
      upload_key,
      job_id: job.id,
      outcome: "collected",
      push: {
        before,
        status: pushed.status,
        ...(pushed.outcome ? { outcome: pushed.outcome } : {}),
        message: pushed.message,
        saved: pushed.saved,
        ...(pushed.failedLine ? { failed_line: pushed.failedLine } : {}),
        ...(pushed.rolledBack !== undefined ? { rolled_back: pushed.rolledBack } : {}),
        transcript: pushed.transcript,
        ...(after ? { after } : {}),
        ...(afterError !== undefined ? { after_error: afterError } : {}),
      },
      duration_ms: Date.now() - started,
    };
  } catch (err) {
    // Failing before the push (the download before it, the job itself) sends nothing.
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    return {
      upload_key,
      job_id: job.id,
      outcome: failure.outcome as ResultUpload["outcome"],
      message: failure.message,
      duration_ms: Date.now() - started,
    };
  }
}
