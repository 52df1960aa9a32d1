import { asc, inArray, isNull } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { events, jobs } from "../../db/schema/index.ts";
import { PRIORITY } from "../../jobs/queue.ts";
import { takes, type EventConsumer, type EventJobParams, type StoredEvent } from "./consumer.ts";

/** Events per pass: one transaction holds the write lock for a few ms. */
export const DISPATCH_BATCH = 200;

/**
 * Claims up to `limit` events no dispatcher has taken and, in the same transaction, queues their jobs: one per
 * consumer that takes the type and per target it names. Claiming is one UPDATE ... RETURNING, so with any number
 * of collectors each event is dispatched once; a crash before COMMIT leaves the events undispatched. Returns how
 * many events it took.
 */
export async function dispatchEvents(db: Db, consumers: readonly EventConsumer[], now: Date, limit = DISPATCH_BATCH): Promise<number> {
  // A read first: every collector polls, and usually there is nothing to dispatch and no lock to take.
  const [any] = await db.select({ id: events.id }).from(events).where(isNull(events.dispatchedAt)).limit(1);
  if (!any) return 0;
  return db.transaction(async (tx) => {
    const pending = tx.select({ id: events.id }).from(events).where(isNull(events.dispatchedAt)).orderBy(asc(events.id)).limit(limit);
    const claimed = await tx.update(events).set({ dispatchedAt: now }).where(inArray(events.id, pending)).returning();
    claimed.sort((a, b) => a.id - b.id);
    const rows: (typeof jobs.$inferInsert)[] = [];
    for (const event of claimed) {
      for (const consumer of consumers) {
        if (!takes(consumer, event.type)) continue;
        const targets = consumer.targets ? await consumer.targets(tx, event) : [null];
        for (const target of targets) rows.push(eventJob(event, consumer.name, target, now));
      }
    }
    await insertJobs(tx, rows);
    return claimed.length;
  });
}

const JOBS_PER_STATEMENT = 500;

async function insertJobs(tx: DbOrTx, rows: (typeof jobs.$inferInsert)[]): Promise<void> {
  for (let i = 0; i < rows.length; i += JOBS_PER_STATEMENT) await tx.insert(jobs).values(rows.slice(i, i + JOBS_PER_STATEMENT));
}

/**
 * The job that hands one event to one consumer's target. Ahead of scheduled downloads, behind download-now:
 * a delivery takes a request, not a session. Attempts are the consumer's to count (ConsumerResult).
 */
export function eventJob(event: Pick<StoredEvent, "id">, consumer: string, target: string | null, now: Date): typeof jobs.$inferInsert {
  const params: EventJobParams = { event_id: event.id, consumer, target };
  return { type: "event", trigger: "event", priority: PRIORITY.api, maxAttempts: 1, params, runAfter: now, createdAt: now };
}

/** Queues one event for one consumer's target again, outside dispatching (a redelivery, a test ping). */
export async function queueEventJob(db: DbOrTx, event: Pick<StoredEvent, "id">, consumer: string, target: string | null, now: Date, requestedBy: number | null = null) {
  // Someone asked for it (trigger api): it goes even to a disabled webhook, unlike a dispatched one.
  const [job] = await db.insert(jobs).values({ ...eventJob(event, consumer, target, now), trigger: "api", requestedBy }).returning();
  return job!;
}
