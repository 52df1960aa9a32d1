import { and, asc, inArray, isNull } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client.ts";
import { events, jobs } from "../../db/schema/index.ts";
import { PRIORITY } from "../../platform/jobs/queue.ts";
import { takes, type EventConsumer, type EventJobParams, type StoredEvent } from "./consumer.ts";

/** Events per pass: one transaction holds the write lock for a few ms. */
export const DISPATCH_BATCH = 200;

/**
 * Claims up to `limit` events no dispatcher has taken and, in the same transaction, queues their jobs: one per
 * consumer that takes the type and per target it names. Claiming is one UPDATE ... RETURNING, so with any number
 * of collectors each event is dispatched once; a crash before COMMIT leaves the events undispatched. Returns how
 * many events it took (0: none was waiting).
 *
 * The events and their targets are read before the transaction: the consumers' target queries (the enabled
 * webhooks, the mail subscribers: one or two per event) ran inside it and held the process's write lock while
 * they did, 200 events a pass, on the thread that runs the collector's sessions. A task run of first versions
 * writes one config.changed per download, and every claim and stored download waited behind them. A target read
 * a moment before the claim is as good as one read in it: a subscription changed in between is one the event
 * came before, and the handlers check their target again when they deliver.
 */
export async function dispatchEvents(
  db: Db,
  consumers: readonly EventConsumer[],
  now: Date,
  limit = DISPATCH_BATCH,
): Promise<number> {
  for (;;) {
    // A read first: every collector polls, and usually there is nothing to dispatch and no lock to take.
    const pending = await db
      .select()
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.id))
      .limit(limit);
    if (!pending.length) return 0;
    const jobsOf = new Map<number, (typeof jobs.$inferInsert)[]>();
    const targetsOf = consumers.map((consumer) => consumer.targets?.(db));
    for (const event of pending) {
      const rows: (typeof jobs.$inferInsert)[] = [];
      for (const [k, consumer] of consumers.entries()) {
        if (!takes(consumer, event.type)) continue;
        const targets = targetsOf[k] ? await targetsOf[k](event) : [null];
        for (const target of targets) rows.push(eventJob(event, consumer.name, target, now));
      }
      jobsOf.set(event.id, rows);
    }
    const delivered = [...jobsOf.keys()].filter((id) => jobsOf.get(id)!.length > 0);
    const unheard = [...jobsOf.keys()].filter((id) => jobsOf.get(id)!.length === 0);
    const taken = await db.transaction(async (tx) => {
      // Only those still undispatched: another collector may have claimed some since the read.
      const claimed = delivered.length
        ? await tx
            .update(events)
            .set({ dispatchedAt: now })
            .where(and(inArray(events.id, delivered), isNull(events.dispatchedAt)))
            .returning({ id: events.id })
        : [];
      claimed.sort((a, b) => a.id - b.id);
      await insertJobs(
        tx,
        claimed.flatMap((c) => jobsOf.get(c.id)!),
      );
      // An event no consumer took has no delivery to retry or redeliver: it goes now rather than after 30 days
      // (a config.changed per stored version, with no webhook or mail subscriber, was a fifth of the database).
      const dropped = unheard.length
        ? await tx
            .delete(events)
            .where(and(inArray(events.id, unheard), isNull(events.dispatchedAt)))
            .returning({ id: events.id })
        : [];
      return claimed.length + dropped.length;
    });
    // None left of those read: another dispatcher took them all; look for newer ones.
    if (taken) return taken;
  }
}

const JOBS_PER_STATEMENT = 500;

async function insertJobs(tx: DbOrTx, rows: (typeof jobs.$inferInsert)[]): Promise<void> {
  for (let i = 0; i < rows.length; i += JOBS_PER_STATEMENT)
    await tx.insert(jobs).values(rows.slice(i, i + JOBS_PER_STATEMENT));
}

/**
 * The job that hands one event to one consumer's target. Ahead of scheduled downloads, behind download-now:
 * a delivery takes a request, not a session. Attempts are the consumer's to count (ConsumerResult).
 */
export function eventJob(
  event: Pick<StoredEvent, "id">,
  consumer: string,
  target: string | null,
  now: Date,
): typeof jobs.$inferInsert {
  const params: EventJobParams = { event_id: event.id, consumer, target };
  return {
    type: "event",
    trigger: "event",
    priority: PRIORITY.api,
    maxAttempts: 1,
    params,
    runAfter: now,
    createdAt: now,
  };
}

/** Queues one event for one consumer's target again, outside dispatching (a redelivery, a test ping). */
export async function queueEventJob(
  db: DbOrTx,
  event: Pick<StoredEvent, "id">,
  consumer: string,
  target: string | null,
  now: Date,
  requestedBy: number | null = null,
) {
  // Someone asked for it (trigger api): it goes even to a disabled webhook, unlike a dispatched one.
  const [job] = await db
    .insert(jobs)
    .values({ ...eventJob(event, consumer, target, now), trigger: "api", requestedBy })
    .returning();
  return job!;
}
