import { and, eq, inArray, isNotNull, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { events, jobs } from "../../db/schema/index.ts";

/** How long dispatched events and finished event jobs are kept: redeliveries reach back this far. */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

/** Rows per delete: each is its own short write, so a prune after a long outage never holds the lock for long. */
export const PRUNE_BATCH = 1_000;

/**
 * Deletes events dispatched, and event jobs finished, more than EVENT_RETENTION_MS ago: every change writes an
 * event and every delivery a job, and neither is needed once a month has passed (a retry's backoff lasts a day).
 */
export async function pruneEvents(db: Db, now: Date): Promise<{ events: number; jobs: number }> {
  const before = new Date(now.getTime() - EVENT_RETENTION_MS);
  let gone = 0;
  for (let n = PRUNE_BATCH; n === PRUNE_BATCH; gone += n) {
    const batch = db
      .select({ id: events.id })
      .from(events)
      .where(and(isNotNull(events.dispatchedAt), lt(events.dispatchedAt, before)))
      .limit(PRUNE_BATCH);
    n = (await db.delete(events).where(inArray(events.id, batch)).returning({ id: events.id })).length;
  }
  let done = 0;
  for (let n = PRUNE_BATCH; n === PRUNE_BATCH; done += n) {
    const batch = db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.type, "event"), eq(jobs.state, "finished"), lt(jobs.finishedAt, before)))
      .limit(PRUNE_BATCH);
    n = (await db.delete(jobs).where(inArray(jobs.id, batch)).returning({ id: jobs.id })).length;
  }
  return { events: gone, jobs: done };
}
