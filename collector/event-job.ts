import { eq } from "drizzle-orm";
import { events } from "../src/db/schema/index.ts";
import { requeueJobAt, type Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import type { ConsumerResult, EventConsumer, EventJobParams } from "../src/modules/events/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { DownloadDeps } from "./download.ts";
import type { JobEnd } from "./store-download.ts";
import { describeError } from "./errors.ts";

/**
 * An event job: hands one event to the consumer its params name (collector/event-consumers.ts), then records
 * the end: done, back in the queue until the time the consumer chose, or failed. Returns undefined when the
 * lease was lost meanwhile (another collector has the job; nothing is recorded).
 */
export async function runEventJob(
  deps: DownloadDeps,
  consumers: readonly EventConsumer[],
  job: Job,
  signal: AbortSignal,
): Promise<JobEnd | undefined> {
  const params = job.params as EventJobParams | null;
  const consumer = consumers.find((c) => c.name === params?.consumer);
  const [event] = params ? await deps.db.select().from(events).where(eq(events.id, params.event_id)) : [];
  let end: ConsumerResult;
  if (!params || !consumer)
    end = { outcome: "failed", message: `this collector has no event consumer named ${params?.consumer ?? "(none)"}` };
  else if (!event) end = { outcome: "failed", message: `event ${params.event_id} no longer exists` };
  else {
    try {
      end = await consumer.handle(
        { db: deps.db, secrets: deps.secrets, clock: deps.clock, logger: deps.logger, signal },
        event,
        params.target,
        job,
      );
    } catch (err) {
      deps.logger.error("an event consumer failed", {
        job: job.id,
        consumer: consumer.name,
        error: describeError(err),
      });
      end = { outcome: "failed", message: `the ${consumer.name} consumer failed: ${failureReason(err).slice(0, 500)}` };
    }
  }
  const now = deps.clock.now();
  if (end.outcome === "retry") {
    return (await requeueJobAt(deps.db, job, deps.owner, end, end.at))
      ? { outcome: "error", message: end.message, retrying: true }
      : undefined;
  }
  const outcome = end.outcome === "done" ? ("success" as const) : ("error" as const);
  const { recorded } = await finishJob(
    deps.db,
    job,
    deps.owner,
    { outcome, message: end.message, result: end.result },
    now,
  );
  return recorded ? { outcome, message: end.message, retrying: false } : undefined;
}
