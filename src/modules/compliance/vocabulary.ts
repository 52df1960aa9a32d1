// The words of compliance that pages and other modules name: a result's states and an assignment's scopes. They
// live with the tables (src/db/schema/compliance.ts); this is the module's surface for them, so a page needs no
// import of the schema.
export { ASSIGNMENT_SCOPES, COMPLIANCE_STATUSES } from "../../db/schema/index.ts";
export type { AssignmentScope, ComplianceStatus } from "../../db/schema/index.ts";
