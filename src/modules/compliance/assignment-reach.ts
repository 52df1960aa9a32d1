import type { DbOrTx } from "../../db/client.ts";
import { reachesOnlyScope, type DeviceScope } from "../../platform/auth/scope.ts";
import { assignmentsReach } from "./assignments.ts";

/**
 * Which of these assignments the caller may change, run or delete: those whose devices all lie in the caller's
 * scope (every one, for a role that sees every device), as the assignments resource decides on a write. Pages
 * show an assignment's controls only then.
 */
export async function changeableAssignments(db: DbOrTx, scope: DeviceScope, ids: number[]): Promise<Set<number>> {
  if (scope.all) return new Set(ids);
  const out = new Set<number>();
  for (const id of ids) if (await reachesOnlyScope(db, scope, assignmentsReach([id]))) out.add(id);
  return out;
}
