// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { hashSecret, newCollectorCredential } from "./enrollment.ts";
export { registerZoneRoutes } from "./handlers.ts";
export { zonesResource } from "./resource.ts";
export {
  collectorsByZone,
  endCollector,
  revokeEnrollmentKey,
  rotateEnrollmentKey,
  zoneCollectors,
  type ZoneActor,
} from "./service.ts";
