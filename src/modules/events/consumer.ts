import type { Clock } from "../../kernel/clock.ts";
import type { Db, DbOrTx } from "../../db/client.ts";
import type { events } from "../../db/schema/index.ts";
import type { Job } from "../../platform/jobs/queue.ts";
import type { Logger } from "../../kernel/logger.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import type { EventType } from "../../platform/outbox/catalogue.ts";

export type StoredEvent = typeof events.$inferSelect;

/** What a consumer's handler gets: the collector's own handles, and the signal that aborts at the job's time limit. */
export type ConsumerContext = { db: Db; secrets: SecretBox; clock: Clock; logger: Logger; signal: AbortSignal };

/**
 * How handling an event ended. `retry` puts the job back in the queue until `at` (the handler decides how
 * many attempts it allows: job.attempts counts them, from 1); `failed` ends it for good.
 */
export type ConsumerResult =
  | { outcome: "done"; message: string; result?: Record<string, unknown> }
  | { outcome: "retry"; at: Date; message: string; result?: Record<string, unknown> }
  | { outcome: "failed"; message: string; result?: Record<string, unknown> };

/**
 * Something that acts on events (webhooks, mail). The dispatcher queues, for each new event of a type it takes,
 * one `event` job per target (targets(): e.g. one per webhook subscription; without it one job per event); a
 * collector claims the job like any other (exactly one runs it, under a lease) and calls handle().
 */
export type EventConsumer = {
  /** Unique; stored in the jobs' params, so keep it stable. */
  name: string;
  types: readonly EventType[] | "all";
  /**
   * The targets of a dispatch pass's events: called once per pass, and what it returns once per event of a type
   * the consumer takes; read only, just before the dispatcher's transaction, outside it (dispatch.ts). What the
   * pass's events share (the subscriptions) is read once for all of them: a task run of 1,000 first versions
   * writes 1,000 config.changed events, and reading the subscribers for each one took a tenth of the collector's
   * main thread while its sessions ran.
   */
  targets?(db: DbOrTx): (event: StoredEvent) => Promise<string[]>;
  handle(ctx: ConsumerContext, event: StoredEvent, target: string | null, job: Job): Promise<ConsumerResult>;
};

export const takes = (consumer: Pick<EventConsumer, "types">, type: string): boolean =>
  consumer.types === "all" || (consumer.types as readonly string[]).includes(type);

/** What an event job's params hold. */
export type EventJobParams = { event_id: number; consumer: string; target: string | null };
