import { and, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "../../db/client.ts";
import { devices, policyAssignments } from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { assignmentCoversDevice } from "./coverage.ts";

/** Which of these ids name rows of the table (an assignment's devices, categories or tags). */
export async function existingIds(db: DbOrTx, table: { id: SQLiteColumn }, wanted: number[]): Promise<Set<number>> {
  if (!wanted.length) return new Set();
  const rows = await db
    .select({ id: table.id })
    .from(table as typeof devices)
    .where(inArray(table.id, wanted));
  return new Set(rows.map((r) => r.id));
}

/** The devices these assignments cover: their evaluations and results are about those devices. */
export const assignmentsReach = (ids: number[]): SQL =>
  sql`exists (select 1 from ${policyAssignments} where ${and(inArray(policyAssignments.id, ids), assignmentCoversDevice)})`;

/**
 * A scoped caller sees an assignment that covers a device of theirs (or, empty now, none at all), and of its
 * device list only their own devices: one about other devices only answers 404, as those devices do.
 */
export function visibleAssignments(scope: DeviceScope): SQL | undefined {
  if (scope.all) return undefined;
  const covers = (within: SQL | undefined) =>
    sql`exists (select 1 from ${devices} where ${and(assignmentCoversDevice, within)})`;
  return sql`(${covers(deviceScopeCondition(scope))} or not ${covers(undefined)})`;
}

export async function inScopeDeviceIds(
  db: DbOrTx,
  ids: number[],
  scope: DeviceScope,
): Promise<Set<number> | undefined> {
  if (scope.all) return undefined;
  if (!ids.length) return new Set();
  return new Set(
    (
      await db
        .select({ id: devices.id })
        .from(devices)
        .where(and(inArray(devices.id, ids), deviceScopeCondition(scope)))
    ).map((r) => r.id),
  );
}
