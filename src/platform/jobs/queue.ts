import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { jobs, taskRunItems, type JobOutcome, type JobTrigger, type JobType } from "../../db/schema/index.ts";
import { preparedPerDatabase } from "../../db/prepared.ts";

export type Job = typeof jobs.$inferSelect;

/** Outcomes worth another attempt: the device may answer next time. Auth failures and bad templates will not. */
const RETRYABLE: ReadonlySet<JobOutcome> = new Set(["timeout", "unreachable"]);

export const PRIORITY = { scheduled: 0, api: 50, downloadNow: 100 } as const;

/** Backoff before attempt n+1: 30 s, 2 min, 8 min, capped at 30 min. */
export const retryDelayMs = (attempts: number) => Math.min(30_000 * 4 ** Math.max(0, attempts - 1), 30 * 60_000);

/**
 * Queues a job for a device, unless one of the same type is already waiting or running for it: then that job
 * is returned (with its priority raised if this request is more urgent), so pressing "download now" twice
 * never opens two sessions.
 */
export async function enqueueDeviceJob(
  db: DbOrTx,
  input: {
    type: JobType;
    deviceId: number;
    trigger: JobTrigger;
    priority: number;
    requestedBy?: number | null;
    /** Attempts a new job gets: the caller reads them from the settings (deviceJobAttempts). */
    maxAttempts: number;
    params?: Record<string, unknown>;
  },
  now: Date,
): Promise<{ job: Job; created: boolean }> {
  const [pending] = await db
    .select()
    .from(jobs)
    .where(
      and(eq(jobs.deviceId, input.deviceId), eq(jobs.type, input.type), inArray(jobs.state, ["queued", "running"])),
    )
    .limit(1);
  if (pending) {
    if (pending.priority < input.priority) {
      await db.update(jobs).set({ priority: input.priority }).where(eq(jobs.id, pending.id));
      pending.priority = input.priority;
    }
    return { job: pending, created: false };
  }
  const [job] = await db
    .insert(jobs)
    .values({
      type: input.type,
      deviceId: input.deviceId,
      trigger: input.trigger,
      priority: input.priority,
      params: input.params ?? null,
      requestedBy: input.requestedBy ?? null,
      maxAttempts: input.maxAttempts,
      runAfter: now,
      createdAt: now,
    })
    .returning();
  return { job: job!, created: true };
}

/** The longest a stream of change messages puts a device's backup off (queueChangeBackup). */
export const MAX_CHANGE_DEFER_MS = 10 * 60_000;

/** Who changed a device's configuration, as its syslog message said (any part may be unknown). */
export type ConfigChangeReport = { user?: string; source?: string; line?: string };

/** "changed by admin from 10.0.0.5 via vty0": what a version records (config_changes.changed_by). */
export function describeChange(change: ConfigChangeReport): string {
  return `changed by ${change.user ?? "an unknown user"}${change.source ? ` from ${change.source}` : ""}${change.line ? ` via ${change.line}` : ""}`;
}

/**
 * Queues the download a device's "configuration changed" message asks for (collector/syslog/), debounced: it runs
 * `debounceMs` after the last such message, so ten commits in a minute make one backup. A download already waiting
 * takes the report (a syslog one is also put off again; a scheduled one keeps its time); one already running may
 * have read the configuration before the change, so another is queued behind it (the claim runs one at a time).
 * A part the new report lacks (Junos's UI_COMMIT_COMPLETED names no user) is kept from the one before.
 */
export async function queueChangeBackup(
  db: DbOrTx,
  input: { deviceId: number; change: ConfigChangeReport; debounceMs: number; maxAttempts: number },
  now: Date,
): Promise<{ jobId: number; created: boolean }> {
  let runAfter = new Date(now.getTime() + input.debounceMs);
  const [waiting] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.deviceId, input.deviceId), eq(jobs.type, "download"), eq(jobs.state, "queued")))
    .limit(1);
  if (waiting) {
    const before = (waiting.params?.change ?? {}) as ConfigChangeReport;
    const change = {
      user: input.change.user ?? before.user,
      source: input.change.source ?? before.source,
      line: input.change.line ?? before.line,
    };
    const params = { ...(waiting.params ?? {}), change, changed_by: describeChange(change) };
    // A device that never stops changing still gets its backup: put off at most MAX_CHANGE_DEFER_MS after the first message.
    const latest = waiting.createdAt.getTime() + Math.max(input.debounceMs, MAX_CHANGE_DEFER_MS);
    if (runAfter.getTime() > latest) runAfter = new Date(Math.max(latest, waiting.runAfter.getTime()));
    await db
      .update(jobs)
      .set({ params, ...(waiting.trigger === "syslog" ? { runAfter } : {}) })
      .where(eq(jobs.id, waiting.id));
    return { jobId: waiting.id, created: false };
  }
  const [job] = await db
    .insert(jobs)
    .values({
      type: "download",
      deviceId: input.deviceId,
      trigger: "syslog",
      priority: PRIORITY.api,
      params: { change: input.change, changed_by: describeChange(input.change) },
      maxAttempts: input.maxAttempts,
      runAfter,
      createdAt: now,
    })
    .returning({ id: jobs.id });
  return { jobId: job!.id, created: true };
}

/**
 * A device job started at once by the process that runs it (svc device:debug) rather than claimed from the queue:
 * it runs under `owner`'s lease from the start, so no collector takes it, and gets no retry. Undefined when a job
 * is already running for the device: a device never has two sessions at once.
 */
export async function startDeviceJob(
  db: Db,
  input: { type: JobType; deviceId: number; trigger: JobTrigger; priority: number },
  owner: string,
  now: Date,
  leaseMs: number,
): Promise<Job | undefined> {
  return await db.transaction(async (tx) => {
    const [running] = await tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.deviceId, input.deviceId), eq(jobs.state, "running")))
      .limit(1);
    if (running) return undefined;
    const [job] = await tx
      .insert(jobs)
      .values({
        ...input,
        state: "running",
        attempts: 1,
        maxAttempts: 1,
        leaseOwner: owner,
        leaseExpiresAt: new Date(now.getTime() + leaseMs),
        runAfter: now,
        createdAt: now,
        startedAt: now,
      })
      .returning();
    return job!;
  });
}

/** Devices a statement: their ids go as one JSON array, so SQLite's limit on bound values does not apply. */
const CHUNK = 5000;

/**
 * enqueueDeviceJob for many devices at once (a task run over thousands of devices): a job already waiting
 * or running for a device is reused (priority raised if need be), the others are inserted. Returns each
 * device's job id.
 */
export async function enqueueDeviceJobs(
  db: DbOrTx,
  input: {
    type: JobType;
    deviceIds: number[];
    trigger: JobTrigger;
    priority: number;
    requestedBy?: number | null;
    maxAttempts: number;
  },
  now: Date,
): Promise<Map<number, number>> {
  const jobOf = new Map<number, number>();
  const { maxAttempts } = input;
  for (let i = 0; i < input.deviceIds.length; i += CHUNK) {
    const ids = input.deviceIds.slice(i, i + CHUNK);
    const pending = await db
      .select({ id: jobs.id, deviceId: jobs.deviceId, priority: jobs.priority })
      .from(jobs)
      .where(
        and(
          sql`${jobs.deviceId} in (select value from json_each(${JSON.stringify(ids)}))`,
          eq(jobs.type, input.type),
          inArray(jobs.state, ["queued", "running"]),
        ),
      );
    for (const p of pending) jobOf.set(p.deviceId!, p.id);
    const raise = pending.filter((p) => p.priority < input.priority).map((p) => p.id);
    if (raise.length) await db.update(jobs).set({ priority: input.priority }).where(inArray(jobs.id, raise));
    const fresh = ids.filter((id) => !jobOf.has(id));
    if (!fresh.length) continue;
    // One statement over the ids as a JSON array: drizzle's builder and 14 bound values a row took most of a
    // 100,000-device run's fan-out (bench:estate).
    const inserted = await db.all<{ id: number; deviceId: number }>(sql`insert into ${jobs}
      (type, device_id, trigger, priority, requested_by, max_attempts, run_after, created_at)
      select ${input.type}, value, ${input.trigger}, ${input.priority}, ${input.requestedBy ?? null}, ${maxAttempts}, ${now.getTime()}, ${now.getTime()}
      from json_each(${JSON.stringify(fresh)})
      returning id, device_id as deviceId`);
    for (const j of inserted) jobOf.set(j.deviceId, j.id);
  }
  return jobOf;
}

/** Queues a job that is about no device (the retention purge, a compliance run of a policy); params say what it does. */
export async function enqueueJob(
  db: DbOrTx,
  input: {
    type: JobType;
    trigger: JobTrigger;
    priority: number;
    requestedBy?: number | null;
    maxAttempts?: number;
    params?: Record<string, unknown>;
  },
  now: Date,
): Promise<Job> {
  const [job] = await db
    .insert(jobs)
    .values({
      type: input.type,
      trigger: input.trigger,
      priority: input.priority,
      requestedBy: input.requestedBy ?? null,
      maxAttempts: input.maxAttempts ?? 1,
      params: input.params ?? null,
      runAfter: now,
      createdAt: now,
    })
    .returning();
  return job!;
}

/** Jobs whose runners decide what a claim after a lost lease does: an event counts its deliveries, a push is never sent twice. */
const COUNTS_OWN_ATTEMPTS: ReadonlySet<JobType> = new Set(["event", "snippet_push"]);

/**
 * Whether a claimed job has been brought back past its attempts by collectors (local or remote) that stopped
 * while running it: its claimer ends it with STOPPED_TOO_OFTEN instead of running it. Only a lease that ran out
 * (requeueExpiredLeases) brings a job back after its last attempt, so a job claimed for the (max_attempts + 2)th
 * time saw its collector stop on its last two attempts. One stop is forgiven (a restart during a nightly run must
 * not fail its jobs); a second one says the job itself may be what stops it (a configuration that exhausts the
 * collector's memory, say), and it would stop it again every time it is claimed, with every session beside it.
 */
export const stoppedTooOften = (job: Pick<Job, "type" | "attempts" | "maxAttempts">) =>
  job.attempts > job.maxAttempts + 1 && !COUNTS_OWN_ATTEMPTS.has(job.type);

/** How a job stoppedTooOften ends. */
export const STOPPED_TOO_OFTEN: JobEnd = {
  outcome: "error",
  message:
    "not tried again: its collector stopped while running it on its last two attempts; run it again once the collectors' logs show why",
};

/** Puts jobs whose collector stopped renewing its lease back in the queue. */
export async function requeueExpiredLeases(db: DbOrTx, now: Date): Promise<number> {
  const rows = await db
    .update(jobs)
    .set({ state: "queued", leaseOwner: null, leaseExpiresAt: null, runAfter: now })
    .where(and(eq(jobs.state, "running"), lt(jobs.leaseExpiresAt, now)))
    .returning({ id: jobs.id });
  return rows.length;
}

/**
 * Claims the most urgent runnable job in one UPDATE ... RETURNING, so two collectors can never take the same
 * job; a job whose device already has a running job waits, so a device never has two sessions at once. Built
 * once per database: every job a collector runs starts here. `zone` says which jobs the claimer may take: a
 * collector beside the database takes jobs of no device, of devices in local-mode zones, and those of remote-zone
 * devices that need no session with the device; a remote collector (src/runtime/collector-api/) only the device
 * session jobs of its own zone's devices, while that zone is remote.
 */
const claimStatement = (which: "local" | "remote") =>
  preparedPerDatabase((db) =>
    db
      .update(jobs)
      .set({
        state: "running",
        leaseOwner: sql`${sql.placeholder("owner")}`,
        leaseExpiresAt: sql`${sql.placeholder("leaseUntil")}`,
        attempts: sql`${jobs.attempts} + 1`,
        startedAt: sql`coalesce(${jobs.startedAt}, ${sql.placeholder("now")})`,
      })
      .where(
        eq(
          jobs.id,
          sql`(
      select j.id from jobs j
      where j.state = 'queued' and j.run_after <= ${sql.placeholder("now")}
        and ${
          which === "local"
            ? sql`(j.device_id is null or exists (
          select 1 from devices d join zones z on z.id = d.zone_id where d.id = j.device_id
            and (z.mode = 'local' or j.type not in ${REMOTE_JOB_TYPES})))`
            : sql`j.type in ${REMOTE_JOB_TYPES} and j.device_id in (
          select d.id from devices d join zones z on z.id = d.zone_id
          where d.zone_id = ${sql.placeholder("zone")} and z.mode = 'remote')`
        }
        and (j.device_id is null or not exists (
          select 1 from jobs r where r.device_id = j.device_id and r.state = 'running'))
      order by j.priority desc, j.id
      limit 1)`,
        ),
      )
      .returning()
      .prepare(),
  );
const claimLocal = claimStatement("local");
const claimRemote = claimStatement("remote");

/**
 * The job kinds a remote collector runs: every kind that needs a session with the device (a backup, download-now,
 * a snippet push, a detection). The others need the database or a mail server and run beside the database.
 */
export const REMOTE_JOB_TYPES: readonly JobType[] = ["download", "detect", "snippet_push"];

export async function claimNextJob(db: Db, owner: string, now: Date, leaseMs: number): Promise<Job | undefined> {
  const [job] = await claimLocal(db).execute({ owner, now: now.getTime(), leaseUntil: now.getTime() + leaseMs });
  return job;
}

/** claimNextJob for a remote collector of `zoneId`: a job of one of its zone's devices, or none. */
export async function claimNextZoneJob(
  db: Db,
  zoneId: number,
  owner: string,
  now: Date,
  leaseMs: number,
): Promise<Job | undefined> {
  const [job] = await claimRemote(db).execute({
    owner,
    zone: zoneId,
    now: now.getTime(),
    leaseUntil: now.getTime() + leaseMs,
  });
  return job;
}

/** Extends the lease; false means it was lost (expired and requeued), and the caller must abandon the job. */
export async function extendLease(
  db: DbOrTx,
  jobId: number,
  owner: string,
  now: Date,
  leaseMs: number,
): Promise<boolean> {
  const rows = await db
    .update(jobs)
    .set({ leaseExpiresAt: new Date(now.getTime() + leaseMs) })
    .where(and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    .returning({ id: jobs.id });
  return rows.length > 0;
}

/**
 * Hands a running job back to the queue, to run again at once, as if it had never been claimed: the lease is
 * cleared and the attempt not counted. For a collector that stops before the job ended; false if the lease was
 * no longer this owner's.
 */
export async function releaseJob(db: DbOrTx, jobId: number, owner: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(jobs)
    .set({
      state: "queued",
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter: now,
      attempts: sql`max(${jobs.attempts} - 1, 0)`,
    })
    .where(and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    .returning({ id: jobs.id });
  return rows.length > 0;
}

/**
 * What completeJob did: `recorded` false when the lease was lost (the caller writes nothing else); `retrying` when
 * the job went back in the queue; `inRun` when it finished and belongs to a task run, which the tasks module then
 * settles (modules/tasks/settle.ts: finishJob).
 */
/** How a job's run ended, as its runner tells completeJob. */
export type JobEnd = { outcome: JobOutcome; message?: string | null; result?: Record<string, unknown> };

export type JobCompletion = { recorded: boolean; retrying: boolean; inRun: boolean };

/**
 * Records how a run ended. A retryable failure with attempts left goes back in the queue after a backoff;
 * anything else finishes the job.
 */
export async function completeJob(
  db: DbOrTx,
  job: Pick<Job, "id" | "attempts" | "maxAttempts">,
  owner: string,
  end: JobEnd,
  now: Date,
): Promise<JobCompletion> {
  const retrying = RETRYABLE.has(end.outcome) && job.attempts < job.maxAttempts;
  const rows = await db
    .update(jobs)
    .set(
      retrying
        ? {
            state: "queued",
            leaseOwner: null,
            leaseExpiresAt: null,
            runAfter: new Date(now.getTime() + retryDelayMs(job.attempts)),
            outcome: end.outcome,
            message: end.message ?? null,
            result: end.result ?? null,
          }
        : {
            state: "finished",
            leaseOwner: null,
            leaseExpiresAt: null,
            outcome: end.outcome,
            message: end.message ?? null,
            result: end.result ?? null,
            finishedAt: now,
          },
    )
    .where(and(eq(jobs.id, job.id), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    // Most jobs belong to no task run (download-now, the API): they skip settling, a statement per job. The id is
    // named with its table: in an UPDATE drizzle writes a column bare, and a bare "id" here is the item's own id.
    .returning({
      id: jobs.id,
      inRun: sql<number>`exists (select 1 from ${taskRunItems} i where i.job_id = ${sql.identifier("jobs")}.${sql.identifier("id")})`,
    });
  const recorded = rows.length > 0;
  return { recorded, retrying: retrying && recorded, inRun: recorded && !retrying && Boolean(rows[0]?.inRun) };
}

/**
 * Puts a running job back in the queue until `runAfter`, for a job that counts its own attempts (an event
 * job: a webhook's backoff runs about a day, past retryDelayMs). False when the lease was lost.
 */
export async function requeueJobAt(
  db: DbOrTx,
  job: Pick<Job, "id">,
  owner: string,
  end: { message: string; result?: Record<string, unknown> },
  runAfter: Date,
): Promise<boolean> {
  const rows = await db
    .update(jobs)
    .set({
      state: "queued",
      leaseOwner: null,
      leaseExpiresAt: null,
      runAfter,
      message: end.message,
      result: end.result ?? null,
    })
    .where(and(eq(jobs.id, job.id), eq(jobs.leaseOwner, owner), eq(jobs.state, "running")))
    .returning({ id: jobs.id });
  return rows.length > 0;
}

export async function getJob(db: DbOrTx, id: number): Promise<Job | undefined> {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id));
  return job;
}
