// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export {
  registerConfigGroups,
  registerConfigSearchRoutes,
  registerRetentionRoutes,
  registerSecretScanRoute,
  searchRequestOfQuery,
} from "./handlers.ts";
export { CHANGE_TRIGGERS, changeListSpec, latestChanges, listChanges } from "./history/changes.ts";
export { compareConfigs } from "./history/compare.ts";
export { unifiedDiff } from "./history/config-diff.ts";
export type { DiffHunk, DiffLine } from "./history/config-diff.ts";
export { compileCompareExclusions } from "./history/exclusions.ts";
export { compareExclusionsResource } from "./history/exclusions-resource.ts";
export type { ExclusionRule } from "./history/exclusions.ts";
export { matchLines } from "./history/line-diff.ts";
export { diffConfigsRoute, searchConfigsGetRoute, setRetentionPolicyRoute } from "./routes.ts";
export type { ConfigOut } from "./schemas.ts";
export { startLineStoreWarmUp } from "./search/line-store-warm.ts";
export { indexPendingVersions } from "./search/search-index.ts";
export { searchConfigs } from "./search/search.ts";
export type { SearchRequest } from "./search/search.ts";
export {
  configExportSpec,
  configText,
  deleteConfig,
  deletedConfigMessage,
  deviceHistory,
  getConfig,
  isLatestVersion,
  listConfigs,
  seriesVersions,
  timeBoundFilter,
} from "./service.ts";
export { readBlobs } from "./storage/blobs.ts";
export { maintainConfigStorage } from "./storage/maintenance.ts";
export {
  changeRetentionPolicy,
  getRetentionPolicy,
  purgeConfigs,
  purgeSummary,
  serializePolicy,
} from "./storage/retention.ts";
export type { PurgeReport, RetentionPolicy } from "./storage/retention.ts";
export { exportArchive } from "./storage/export.ts";
export { remaskStoredConfigs, scanStoredSecrets } from "./storage/secret-history.ts";
export { secretsDigest, zoneDigestLabel, zoneSecretsDigestKey } from "./storage/secrets-digest.ts";
export {
  compressChanged,
  digestOutputs,
  latestConfigIds,
  latestVersions,
  markLatestSeen,
  storeConfigs,
} from "./storage/store.ts";
export type { Digested, StoreResult } from "./storage/store.ts";
export { configFileName, normalizeConfigText } from "./storage/text.ts";
