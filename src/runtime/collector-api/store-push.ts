import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { jobs } from "../../db/schema/index.ts";
import type { Job } from "../../platform/jobs/queue.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { completePushJob, type PushEnd } from "../../modules/snippets/index.ts";
import { finishJob } from "../../modules/tasks/index.ts";
import { loadPlan, type LoadedPlan } from "../../../collector/download.ts";
import {
  insertSnapshotJob,
  pushEnd,
  pushFailure,
  pushTargetOf,
  type Snapshot,
} from "../../../collector/snippet-job.ts";
import { LeaseLost, storeDownload } from "../../../collector/store-download.ts";
import { siteDigestsOf } from "./site-digests.ts";
import type { Collected, ResultUpload } from "./wire.ts";

type Deps = { db: Db; secrets: SecretBox; now: Date };
type Collector = { owner: string; zoneId: number };

/** A download around the push, as the site masked it, stored as its own download job (trigger snippet). */
async function storeSnapshot(
  deps: Deps,
  collector: Collector,
  loaded: LoadedPlan,
  collected: Collected,
): Promise<Snapshot> {
  const { owner } = collector;
  const deviceId = loaded.plan.device.id;
  const job = await insertSnapshotJob(deps.db, deviceId, owner, 60_000, deps.now);
  const end = await storeDownload(deps.db, {
    job,
    owner,
    deviceId,
    templateCode: loaded.templateCode,
    exclusions: loaded.exclusions,
    storedHashes: loaded.storedHashes,
    outputs: collected.outputs,
    siteDigests: siteDigestsOf(collector.zoneId, collected.secrets_digests),
    printed: [],
    skipped: collected.skipped,
    fingerprint: collected.fingerprint,
    snmp: {},
    configChanged: { snmpConfigChangedValue: null, snmpConfigChangedAt: null },
    startedAt: Date.now() - collected.duration_ms,
    now: deps.now,
  });
  if (!end) throw new LeaseLost();
  const [stored] = await deps.db.select({ result: jobs.result }).from(jobs).where(eq(jobs.id, job.id));
  return { jobId: job.id, configIds: stored?.result?.config_ids ?? [], texts: new Map(collected.outputs) };
}

/**
 * Records a snippet push a remote collector ran: its downloads before and after stored as the local run stores
 * them, their diff, and the deployment settled (pushEnd, completePushJob), so a push through a site reads the
 * same as one from beside the database. A push that failed before sending anything says "nothing was pushed".
 */
export async function storePush(
  deps: Deps,
  collector: Collector,
  job: Job,
  upload: ResultUpload,
): Promise<{ outcome: string; message: string } | undefined> {
  const { owner } = collector;
  const finish = async (end: PushEnd) =>
    (await completePushJob(deps.db, job, owner, end, deps.now, finishJob)) ? end : undefined;
  const pushed = upload.push;
  if (upload.outcome !== "collected" || !pushed) {
    const outcome = upload.outcome === "collected" ? "error" : upload.outcome;
    return finish(pushFailure({ outcome, message: upload.message ?? outcome }, undefined, upload.duration_ms));
  }
  const target = await pushTargetOf(deps.db, { ...job, attempts: 1 });
  let loaded: LoadedPlan;
  try {
    loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
  } catch (err) {
    // The push ran; only what storing it needs is gone (the device or its template deleted meanwhile).
    return finish({
      status: "error",
      outcome: "error",
      message: `the push ran (${pushed.message}) but its downloads could not be stored: ${failureReason(err).slice(0, 300)}`,
      result: { duration_ms: upload.duration_ms },
      transcript: pushed.transcript,
    });
  }
  const before = await storeSnapshot(deps, collector, loaded, pushed.before);
  const after = pushed.after ? await storeSnapshot(deps, collector, loaded, pushed.after) : undefined;
  const lines = "refused" in target ? [] : target.lines;
  return finish(
    pushEnd(
      loaded,
      lines,
      {
        status: pushed.status,
        outcome: pushed.outcome,
        message: pushed.message,
        saved: pushed.saved,
        failedLine: pushed.failed_line,
        rolledBack: pushed.rolled_back,
        transcript: pushed.transcript,
      },
      { before, after, afterError: pushed.after_error },
      upload.duration_ms,
    ),
  );
}
