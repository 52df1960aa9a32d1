// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { credentialsResource } from "./resource.ts";
export { SNMP_AUTH_PROTOCOLS, SNMP_PRIV_PROTOCOLS } from "./snmp.ts";
export type { SnmpAuthProtocol, SnmpPrivProtocol } from "./snmp.ts";
export { refuseUnlessUsable, whyNotUsable } from "./use.ts";
export type { CredentialUser } from "./use.ts";
