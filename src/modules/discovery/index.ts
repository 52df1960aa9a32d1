// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { adoptCandidates, devicesAt } from "./adopt.ts";
export type { Candidate } from "./adopt.ts";
export { registerDiscoveryRoutes } from "./handlers.ts";
export { expandTargets } from "./targets.ts";
export { scanTaskValues } from "./task-values.ts";
export { candidateListSpec, DiscoverInput, ScanPresetInput } from "./routes.ts";
export {
  adoptAll,
  adoptOne,
  createPreset,
  deletePreset,
  ignoreOne,
  listCandidates,
  listPresets,
  refuseScoped,
  requestDiscovery,
  runPreset,
  serializePreset,
} from "./service.ts";
