// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { deploySnippet, redeployFailures, sendSnippet } from "./deploy.ts";
export { createRemediationSnippet } from "./remediation.ts";
export type { DeployActor, dryRunAnswer } from "./deploy.ts";
export {
  deploymentDeviceListSpec,
  deploymentDevicesOf,
  deploymentListSpec,
  getDeployment,
  listDeploymentDevices,
  listDeployments,
  visibleDeploymentDevices,
  visibleDeployments,
} from "./deployment-views.ts";
export type { Links } from "./deployment-views.ts";
export { completePushJob, createDeployment, settleOrphanedPushes } from "./deployments.ts";
export type { PushEnd } from "./deployments.ts";
export { registerSnippetRoutes } from "./handlers.ts";
export { SNIPPET_TASK_TARGETS, snippetsResource } from "./resource.ts";
export { CONFIRM_ABOVE, DeployInput } from "./routes.ts";
export { renderTargets } from "./targets.ts";
export { DEPLOYMENT_DEVICE_STATUSES } from "../../db/schema/index.ts";
export { RemediationInput } from "./routes.ts";
