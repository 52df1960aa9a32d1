// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { actorGrant, assertWithin, excess, grantOf } from "./privilege.ts";
export { rolesResource } from "./resource.ts";
