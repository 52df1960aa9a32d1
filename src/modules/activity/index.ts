// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { registerActivityRoutes } from "./handlers.ts";
export { activityListSpec, listActivity } from "./service.ts";
export type { ActivityOut } from "./service.ts";
