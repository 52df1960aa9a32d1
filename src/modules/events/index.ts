// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export type { ConsumerContext, ConsumerResult, EventConsumer, EventJobParams, StoredEvent } from "./consumer.ts";
export { DISPATCH_BATCH, dispatchEvents, queueEventJob } from "./dispatch.ts";
export { pruneEvents } from "./retention.ts";
