// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { registerDashboardRoutes } from "./handlers.ts";
export {
  changePulse,
  complianceSummary,
  configInfo,
  deviceCounts,
  erroredDevices,
  latestDevices,
  queueInfo,
  taskStatus,
} from "./service.ts";
