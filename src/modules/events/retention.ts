import { and, eq, isNotNull, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { events, jobs } from "../../db/schema/index.ts";

/** How long dispatched events and finished event jobs are kept: redeliveries reach back this far. */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * Deletes events dispatched, and event jobs finished, more than EVENT_RETENTION_MS ago: every change writes an
 * event and every delivery a job, and neither is needed once a month has passed (a retry's backoff lasts a day).
 */
export async function pruneEvents(db: Db, now: Date): Promise<{ events: number; jobs: number }> {
  const before = new Date(now.getTime() - EVENT_RETENTION_MS);
  const gone = await db.delete(events).where(and(isNotNull(events.dispatchedAt), lt(events.dispatchedAt, before))).returning({ id: events.id });
  const done = await db.delete(jobs).where(and(eq(jobs.type, "event"), eq(jobs.state, "finished"), lt(jobs.finishedAt, before))).returning({ id: jobs.id });
  return { events: gone.length, jobs: done.length };
}
