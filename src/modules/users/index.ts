// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { changePassword, setUserEnabled } from "./account.ts";
export { assertCanManage } from "./guards.ts";
export { registerUserRoutes } from "./handlers.ts";
export { showUser, usersResource } from "./resource.ts";
export type { UserOut } from "./resource.ts";
