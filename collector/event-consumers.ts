import type { EventConsumer } from "../src/modules/events/index.ts";
import { mailConsumer } from "../src/modules/mail/index.ts";
import { webhooksConsumer } from "./webhook-delivery.ts";

/**
 * The event consumers every collector runs: add yours here (docs/events.md says how). The dispatcher queues an
 * event job per consumer and target; a collector runs it with the consumer of the name in the job.
 */
export const EVENT_CONSUMERS: readonly EventConsumer[] = [webhooksConsumer, mailConsumer];
