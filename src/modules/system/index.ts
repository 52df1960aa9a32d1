// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { CHECK_NAMES, healthFor, latestHealth, runHealthChecks } from "./checks.ts";
export type { HealthRun } from "./checks.ts";
export { registerSystemRoutes } from "./handlers.ts";
export { systemInfo } from "./info.ts";
export { readiness } from "./readiness.ts";
export { startHealthSchedule } from "./schedule.ts";
