import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { collectorUploads, devices, jobs } from "../../db/schema/index.ts";
import { REMOTE_JOB_TYPES, type Job } from "../../platform/jobs/queue.ts";
import { finishJob } from "../../modules/tasks/index.ts";
import { loadPlan } from "../../../collector/download.ts";
import { storeDownload } from "../../../collector/store-download.ts";
import { recordBackupEnd } from "../../../collector/backup-events.ts";
import { SessionError } from "../../../collector/session.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { siteDigestsOf } from "./site-digests.ts";
import { storeDetection } from "./store-detect.ts";
import { storePush } from "./store-push.ts";
import type { ResultUpload } from "./wire.ts";

export type UploadAnswer = {
  job_id: number;
  /** Whether this upload changed the job: false when another run ended it meanwhile (nothing stored twice). */
  recorded: boolean;
  outcome: string | null;
  message: string;
};

/**
 * Stores a remote collector's result. A result arriving after its lease ran out (the collector could not reach
 * the server meanwhile) is still taken if nobody else took the job since: it is what the job waited for.
 * One that lost its job to another run is dropped. Either way the answer is kept under the collector's
 * upload key, so a retried upload answers the same and stores nothing again.
 */
export async function storeUpload(
  deps: { db: Db; secrets: SecretBox; now: Date },
  collector: { id: number; zoneId: number; owner: string },
  upload: ResultUpload,
): Promise<{ answer: UploadAnswer; replayed: boolean } | undefined> {
  const { db } = deps;
  const replay = await answerOf(db, collector.id, upload.upload_key);
  if (replay) return { answer: replay, replayed: true };
  const [row] = await db
    .select({ job: jobs, zoneId: devices.zoneId })
    .from(jobs)
    .innerJoin(devices, eq(devices.id, jobs.deviceId))
    .where(eq(jobs.id, upload.job_id));
  // A job of another zone does not exist for this collector.
  if (!row || row.zoneId !== collector.zoneId || !REMOTE_JOB_TYPES.includes(row.job.type)) return undefined;
  let job = row.job;
  if (job.state === "queued") {
    const [adopted] = await db
      .update(jobs)
      .set({
        state: "running",
        leaseOwner: collector.owner,
        leaseExpiresAt: new Date(deps.now.getTime() + 60_000),
        attempts: Math.max(1, job.attempts),
      })
      .where(and(eq(jobs.id, job.id), eq(jobs.state, "queued")))
      .returning();
    if (adopted) job = adopted;
  }
  const answer =
    job.state === "running" && job.leaseOwner === collector.owner
      ? await store(deps, collector, job, upload)
      : dropped(job);
  try {
    await db.insert(collectorUploads).values({
      collectorId: collector.id,
      uploadKey: upload.upload_key,
      jobId: job.id,
      answer,
      createdAt: deps.now,
    });
  } catch {
    // The same upload raced this one and was answered first: answer as it was.
    const first = await answerOf(db, collector.id, upload.upload_key);
    if (first) return { answer: first, replayed: true };
    throw new Error("could not record the upload");
  }
  return { answer, replayed: false };
}

const dropped = (job: Job): UploadAnswer => ({
  job_id: job.id,
  recorded: false,
  outcome: job.outcome,
  message: "another run of the job ended it meanwhile; this result was dropped",
});

async function answerOf(db: Db, collectorId: number, key: string): Promise<UploadAnswer | undefined> {
  const [row] = await db
    .select({ answer: collectorUploads.answer })
    .from(collectorUploads)
    .where(and(eq(collectorUploads.collectorId, collectorId), eq(collectorUploads.uploadKey, key)));
  return row?.answer as UploadAnswer | undefined;
}

async function store(
  deps: { db: Db; secrets: SecretBox; now: Date },
  collector: { owner: string; zoneId: number },
  job: Job,
  upload: ResultUpload,
): Promise<UploadAnswer> {
  const { db, now } = deps;
  if (job.type !== "download") {
    const end =
      job.type === "detect"
        ? await storeDetection(deps, collector.owner, job, upload)
        : await storePush(deps, collector, job, upload);
    return end ? { job_id: job.id, recorded: true, outcome: end.outcome, message: end.message } : dropped(job);
  }
  if (upload.outcome === "collected") {
    try {
      const loaded = await loadPlan(db, deps.secrets, job.deviceId!);
      // The texts were cleaned and masked at the site (collector/remote/run-download.ts): stored as they came,
      // with the digests of the masked values the site made under its zone's key (docs/zones.md).
      const end = await storeDownload(db, {
        job,
        owner: collector.owner,
        deviceId: job.deviceId!,
        templateCode: loaded.templateCode,
        exclusions: loaded.exclusions,
        storedHashes: loaded.storedHashes,
        outputs: upload.outputs ?? [],
        siteDigests: siteDigestsOf(collector.zoneId, upload.secrets_digests),
        printed: [],
        skipped: upload.skipped,
        fingerprint: upload.fingerprint,
        snmp: {},
        configChanged: { snmpConfigChangedValue: null, snmpConfigChangedAt: null },
        startedAt: Date.now() - upload.duration_ms,
        now,
      });
      if (!end) return dropped(job);
      return { job_id: job.id, recorded: true, outcome: end.outcome, message: end.message };
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
      return fail(deps, collector, job, {
        ...upload,
        outcome: err.outcome as ResultUpload["outcome"],
        message: err.message,
        reached: true,
      });
    }
  }
  return fail(deps, collector, job, upload);
}

async function fail(
  deps: { db: Db; now: Date },
  collector: { owner: string },
  job: Job,
  upload: ResultUpload,
): Promise<UploadAnswer> {
  const outcome = upload.outcome === "collected" ? "error" : upload.outcome;
  const message = upload.message ?? outcome;
  const { now } = deps;
  return deps.db.transaction(async (tx) => {
    const { recorded, retrying } = await finishJob(
      tx,
      job,
      collector.owner,
      {
        outcome,
        message,
        result: {
          duration_ms: upload.duration_ms,
          ...(upload.last_lines?.length ? { last_lines: upload.last_lines } : {}),
          ...(upload.transcript ? { transcript: upload.transcript } : {}),
        },
      },
      now,
    );
    if (!recorded) return dropped(job);
    await recordBackupEnd(tx, job, { outcome, message, retrying }, now);
    const reachable = upload.reached || (outcome !== "unreachable" && outcome !== "timeout");
    await tx
      .update(devices)
      .set(reachable ? { status: "up", lastSeenAt: now } : { status: "unreachable" })
      .where(eq(devices.id, job.deviceId!));
    return { job_id: job.id, recorded: true, outcome, message };
  });
}
