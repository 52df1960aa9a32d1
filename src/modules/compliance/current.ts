import { sql, type SQL } from "drizzle-orm";
import { complianceCurrent, complianceResults, devices } from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";

/**
 * The newest result of its (assignment, device) pair: the device's current state under that assignment. Read from
 * compliance_current, the link the triggers keep to each pair's newest result, through its result_id index: the
 * list's `filter[latest]` counted its matches by comparing every result ever stored with its pair's others
 * (current-plans.test.ts asserts the plan).
 */
export const isCurrentResult = sql`${complianceResults.id} in (select ${complianceCurrent.resultId} from ${complianceCurrent})`;

/**
 * Each pair's newest result made before `at`, for the pairs of the scope's devices: a search of
 * compliance_results_device_idx per pair, so a scoped trend's starting state grows with the scope's pairs, not with
 * every result made before its range. Aliased tables: the outer query may read devices and compliance_results too.
 */
export function newestBefore(at: number, scope: DeviceScope): SQL {
  const inScope = deviceScopeCondition(scope);
  return sql`${complianceResults.id} in (select (select r2.id from compliance_results r2
      where r2.device_id = cc.device_id and r2.assignment_id = cc.assignment_id and r2.evaluated_at < ${at}
      order by r2.evaluated_at desc, r2.id desc limit 1)
    from compliance_current cc ${inScope ? sql`inner join ${devices} on ${devices.id} = cc.device_id where ${inScope}` : sql``})`;
}
