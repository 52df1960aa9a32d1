// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { registerBackupRoutes } from "./handlers.ts";
export { refuseScopedBackups, removeBackup, takeBackup } from "./service.ts";
