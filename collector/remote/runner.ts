import { hostname } from "node:os";
import type { Logger } from "../../src/kernel/logger.ts";
import { newKeyPair } from "../../src/platform/secrets/sealed-box.ts";
import type { ResultUpload, WireJob } from "../../src/runtime/collector-api/index.ts";
import { DEFAULT_LIMITS, type SessionLimits } from "../session.ts";
import { wakeableSleep } from "../wakeable-sleep.ts";
import { serverClient, ServerAnswer, type ServerClient } from "./http.ts";
import { runRemoteDetect } from "./run-detect.ts";
import { runRemoteDownload } from "./run-download.ts";
import { runRemotePush } from "./run-push.ts";
import { Spool } from "./spool.ts";
import { readEnrollment, writeEnrollment, type Enrollment } from "./state.ts";

export type RemoteCollectorOptions = {
  server: string;
  enrollmentKey?: string;
  stateDir: string;
  ca?: string;
  allowHttp: boolean;
  name?: string;
  version: string;
  concurrency: number;
  /** The spool's bound in bytes. */
  spoolBytes: number;
  heartbeatMs: number;
  /** How long a claim may wait at the server for work (the long poll). */
  claimWaitMs: number;
  jobTimeLimitMs: number;
  session: { limits: SessionLimits; connectTimeoutMs: number };
};

export const DEFAULT_REMOTE_OPTIONS = {
  concurrency: 20,
  spoolBytes: 256 * 1024 * 1024,
  heartbeatMs: 15_000,
  claimWaitMs: 25_000,
  jobTimeLimitMs: 10 * 60_000,
  session: { limits: DEFAULT_LIMITS, connectTimeoutMs: 15_000 },
};

/** Why a remote collector stopped for good: revoked, refused, or a server it must not trust. */
export class CollectorRefused extends Error {}

/** What runs each job kind at the site: every kind that needs the device (REMOTE_JOB_TYPES). */
const RUNNERS: Record<WireJob["type"], typeof runRemoteDownload> = {
  download: runRemoteDownload,
  detect: runRemoteDetect,
  snippet_push: runRemotePush,
};

/** Backoff after the server could not be reached: 1 s doubling to 30 s. */
const backoff = (failures: number) => Math.min(1000 * 2 ** Math.max(0, failures - 1), 30_000);

/** Enrolls once (the key pair made here, only its public half sent), or reads the enrollment kept from before. */
async function enrollment(client: ServerClient, options: RemoteCollectorOptions, logger: Logger): Promise<Enrollment> {
  const kept = readEnrollment(options.stateDir);
  if (kept && kept.server === options.server) return kept;
  if (!options.enrollmentKey)
    throw new CollectorRefused(`not enrolled with ${options.server} yet: pass --enroll with the zone's enrollment key`);
  const keys = newKeyPair();
  const name = options.name ?? hostname();
  try {
    const answer = await client.post<{ collector_id: number; zone_id: number; credential: string }>(
      "/collector-api/v1/enroll",
      { enrollment_key: options.enrollmentKey, name, public_key: keys.publicKey },
    );
    const enrolled: Enrollment = {
      server: options.server,
      collector_id: answer.collector_id,
      zone_id: answer.zone_id,
      credential: answer.credential,
      public_key: keys.publicKey,
      private_key: keys.privateKey,
    };
    writeEnrollment(options.stateDir, enrolled);
    logger.info("enrolled", { collector_id: answer.collector_id, zone_id: answer.zone_id });
    return enrolled;
  } catch (err) {
    if (err instanceof ServerAnswer && err.status === 401)
      throw new CollectorRefused("the enrollment key was refused: it is wrong, revoked or rotated; ask for a new one");
    throw err;
  }
}

/**
 * The site collector: the same session code as the local one (collect.ts), speaking only HTTP(S) to the API.
 * Claims its zone's jobs by long poll, keeps their leases, runs each, and puts each finished result in the spool;
 * the uploader delivers the spool in order, waiting out an unreachable server. A 401 anywhere (revoked or
 * deleted) stops it at once. `done` settles when it has stopped, rejecting with why it was refused.
 */
export async function startRemoteCollector(options: RemoteCollectorOptions, logger: Logger) {
  const client = serverClient({ server: options.server, ca: options.ca, allowHttp: options.allowHttp });
  if (new URL(options.server).protocol === "http:")
    logger.warn("plain HTTP: results and sealed jobs cross the network unencrypted at the transport", {
      server: options.server,
    });
  const me = await enrollment(client, options, logger).catch((err) => {
    client.close();
    throw err;
  });
  client.setCredential(me.credential);
  const keyPair = { publicKey: me.public_key, privateKey: me.private_key };
  const spool = new Spool(options.stateDir, options.spoolBytes, (gone) =>
    logger.warn("the spool is full: dropped its oldest result", gone),
  );
  const active = new Map<number, AbortController>();
  const claimPause = wakeableSleep();
  const uploadPause = wakeableSleep();
  const heartbeatPause = wakeableSleep();
  let running = true;
  let refused: CollectorRefused | undefined;

  const refuse = (err: unknown): boolean => {
    if (!(err instanceof ServerAnswer) || (err.status !== 401 && err.status !== 495)) return false;
    if (!refused) {
      refused = new CollectorRefused(
        err.status === 401 ? "the server refused this collector's credential: it was revoked or deleted" : err.message,
      );
      logger.error("stopping", { reason: refused.message });
    }
    stop();
    for (const controller of active.values()) controller.abort("the collector was refused");
    return true;
  };

  function stop(): void {
    running = false;
    claimPause.wake();
    uploadPause.wake();
    heartbeatPause.wake();
  }

  const heartbeatLoop = (async () => {
    while (running) {
      try {
        await client.post("/collector-api/v1/heartbeat", {
          version: options.version,
          sessions: active.size,
          spool_bytes: spool.bytes(),
          spool_dropped: spool.droppedCount,
        });
      } catch (err) {
        if (!refuse(err)) logger.warn("heartbeat not delivered", { error: (err as Error).message });
      }
      if (running) await heartbeatPause.sleep(options.heartbeatMs);
    }
  })();

  async function run(job: WireJob): Promise<void> {
    const controller = new AbortController();
    active.set(job.id, controller);
    const limit = setTimeout(() => controller.abort("the job ran past its time limit"), options.jobTimeLimitMs);
    const lease = setInterval(
      () =>
        void client.post(`/collector-api/v1/jobs/${job.id}/lease`, {}).catch((err) => {
          if (refuse(err)) return;
          // Lost (409): another collector may have it now. Unreachable: keep working, the result waits in the spool.
          if (err instanceof ServerAnswer) controller.abort("the job's lease was lost");
        }),
      Math.max(100, job.lease_ms / 3),
    );
    try {
      const result = await RUNNERS[job.type](job, keyPair, options.session, controller.signal);
      if (controller.signal.aborted && !running) return;
      if (controller.signal.aborted && String(controller.signal.reason).includes("lease was lost")) {
        logger.warn("lease lost; the job's result was discarded", { job: job.id });
        return;
      }
      spool.put(result);
      logger.info("job finished", {
        job: job.id,
        device: job.device.id,
        outcome: result.outcome,
        duration_ms: result.duration_ms,
      });
      uploadPause.wake();
    } finally {
      clearTimeout(limit);
      clearInterval(lease);
      active.delete(job.id);
      claimPause.wake();
    }
  }

  const claimLoop = (async () => {
    let failures = 0;
    while (running) {
      const free = options.concurrency - active.size;
      if (free <= 0) {
        await claimPause.sleep(60_000);
        continue;
      }
      try {
        const jobs = await client.post<WireJob[]>(
          "/collector-api/v1/jobs/claim",
          { wait_ms: options.claimWaitMs, max: free },
          { timeoutMs: options.claimWaitMs + 15_000 },
        );
        failures = 0;
        for (const job of jobs) {
          // A kind this version does not know (a newer server): left to its lease, which another collector takes.
          if (!(job.type in RUNNERS)) continue;
          void run(job).catch((err) => logger.error("job failed", { job: job.id, error: (err as Error).message }));
        }
      } catch (err) {
        if (refuse(err)) break;
        failures++;
        logger.warn("could not claim jobs; trying again", { error: (err as Error).message, in_ms: backoff(failures) });
        await claimPause.sleep(backoff(failures));
      }
    }
  })();

  const uploadLoop = (async () => {
    let failures = 0;
    while (running || (!refused && spool.length && failures === 0)) {
      const next = spool.peek();
      if (!next) {
        if (!running) break;
        await uploadPause.sleep(60_000);
        continue;
      }
      if (!next.upload) {
        next.remove();
        continue;
      }
      try {
        await client.post<unknown>("/collector-api/v1/results", next.upload, { compress: true });
        next.remove();
        failures = 0;
      } catch (err) {
        if (refuse(err)) break;
        if (err instanceof ServerAnswer) {
          // The server will never take it (its job is gone, say): keeping it would stop every result behind it.
          logger.warn("result refused by the server; dropped", { job: next.upload.job_id, reason: err.message });
          next.remove();
          continue;
        }
        failures++;
        if (failures === 1)
          logger.warn("server unreachable; results wait in the spool", { error: (err as Error).message });
        await uploadPause.sleep(backoff(failures));
      }
    }
  })();

  const done = Promise.all([heartbeatLoop, claimLoop, uploadLoop]).then(() => {
    client.close();
    if (refused) throw refused;
  });
  logger.info("remote collector started", {
    collector_id: me.collector_id,
    zone_id: me.zone_id,
    server: options.server,
  });

  return {
    collectorId: me.collector_id,
    zoneId: me.zone_id,
    done,
    get active() {
      return active.size;
    },
    spool,
    /** Stops claiming and waits for the jobs in hand (their results stay spooled if not yet delivered). */
    async stop(): Promise<void> {
      running = false;
      claimPause.wake();
      heartbeatPause.wake();
      while (active.size) await new Promise((r) => setTimeout(r, 50));
      uploadPause.wake();
      await done.catch(() => {});
    },
  };
}

export type { ResultUpload };
