import { policiesResource } from "../../../modules/compliance/index.ts";
import type { BulkDeleteSpec } from "../inventory/bulk-delete.tsx";

/**
 * **Delete selected** on the compliance page's policies (POST /compliance/bulk-delete): each ticked policy
 * confirmed with why the API would refuse it (assignments left, built-in, judging devices outside the scope),
 * then the API's bulk delete, all or nothing.
 */
export const POLICIES_BULK: BulkDeleteSpec = {
  path: "/compliance",
  singular: "policy",
  plural: "policies",
  ability: "policycompliance",
  resource: policiesResource,
  nameOf: (row) => String(row.name),
};
