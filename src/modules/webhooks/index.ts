// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { registerWebhookRoutes } from "./handlers.ts";
export {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listDeliveries,
  pingWebhook,
  redeliverWebhookEvent,
  rotateWebhookSecret,
  updateWebhook,
} from "./manage.ts";
export type { WebhookActor } from "./manage.ts";
export {
  SUBSCRIBABLE,
  WebhookInput,
  WebhookPatch,
  deliveryListSpec,
  payloadSchemaName,
  webhookListSpec,
} from "./routes.ts";
export {
  EXCERPT_BYTES,
  eventTypes,
  listWebhooks,
  logDelivery,
  requireWholeEstate,
  serializeWebhook,
  settleSubscription,
  webhookTargets,
} from "./service.ts";
export { signPayload } from "./signing.ts";
export { isNonPublicAddress, refusedAddress, refusedUrl } from "./target.ts";
