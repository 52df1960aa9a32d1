// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, planCsvImport } from "./csv-import.ts";
export { csvText, parseCsvTable } from "./csv.ts";
export { requestDetect } from "./detect.ts";
export { exportStream } from "./export.ts";
export { registerDeviceRoutes } from "./handlers.ts";
export { deviceFilterChoices } from "./filter-choices.ts";
export { pinnedHostKey, resetHostKey } from "./host-key.ts";
export { HostKeyResetInput } from "./routes.ts";
export { failureTranscript } from "./last-failure.ts";
export { applyImport } from "./import-apply.ts";
export type { ImportReport } from "./import-apply.ts";
export {
  DEFAULT_OXIDIZED_MAP,
  OXIDIZED_KEYS,
  importInventory,
  parseOxidized,
  parseRancid,
} from "./inventory-import.ts";
export type { InventoryReport, OxidizedMap, ParsedInventory } from "./inventory-import.ts";
export { BulkUpdate, DeviceInput, DevicePatch, MAX_DEVICE_TAGS } from "./schemas.ts";
export type { DeviceOut } from "./schemas.ts";
export { deviceReferences } from "./references.ts";
export { reachedBy, selectedDevices } from "./selection.ts";
export type { DeviceSelection } from "./selection.ts";
export {
  createDevices,
  deleteDevices,
  deviceListSpec,
  getDevice,
  listDevices,
  setDevicesEnabled,
  updateDevices,
} from "./service.ts";
export type { WriteContext } from "./service.ts";
export { deviceStateCounts, newestBackupAndDownload } from "./state-counts.ts";
export type { DeviceStateCounts } from "./state-counts.ts";
export { missingTemplateWarning } from "./template-warning.ts";
