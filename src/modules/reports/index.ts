// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { reportAnswer } from "./answer.ts";
export { registerReportRoutes } from "./handlers.ts";
export { dayRange, rangeParams } from "./range.ts";
export {
  DEVICE_GROUPS,
  backupSuccess,
  backupSummary,
  changeHistory,
  changesPerDay,
  deviceStatistics,
  topChangers,
} from "./service.ts";
