// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { createCollectorApi } from "./routes.ts";
export { COLLECTOR_CREDENTIAL_HEADER } from "./wire.ts";
export type { ResultUpload, WireJob } from "./wire.ts";
