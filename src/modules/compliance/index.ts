// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { copyPolicy, runAssignment, runPolicy } from "./actions.ts";
export { seedBuiltinPolicies } from "./builtins.ts";
export { exportResults } from "./export.ts";
export { registerComplianceExportRoute, registerComplianceRoutes } from "./handlers.ts";
export { runComplianceJob } from "./jobs.ts";
export { evaluatePendingVersions, queueForCompliance } from "./pending.ts";
export { assignmentsResource, policiesResource } from "./resource.ts";
export { deviceCompliance, getResult, listResults, resultListSpec } from "./results.ts";
export type { ResultOut } from "./results.ts";
export { TrendsQuery } from "./schemas.ts";
export { complianceTrends } from "./trends.ts";
export { ASSIGNMENT_SCOPES, COMPLIANCE_STATUSES } from "./vocabulary.ts";
export type { AssignmentScope, ComplianceStatus } from "./vocabulary.ts";
export { changeableAssignments } from "./assignment-reach.ts";
export { changeablePolicies } from "./policies.ts";
