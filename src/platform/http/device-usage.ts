import { and, count, inArray, or } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { type DeviceScope, deviceIdInScope, deviceScopeCondition } from "../auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { devices } from "../../db/schema/index.ts";
import { plural } from "../../kernel/words.ts";
import { ApiError } from "./errors.ts";

/**
 * How devices reach a shared record: through columns of `devices` (devices.vendorId; several for a credential
 * set, a device counted once however many of them name it), or through a link table (device_tags: its key
 * column and its device column).
 */
export type DeviceUse = { columns: readonly SQLiteColumn[] } | { key: SQLiteColumn; device: SQLiteColumn };

/** How many devices in the scope use each of the ids; ids no device uses are absent. */
export async function deviceCounts(
  db: DbOrTx,
  use: DeviceUse,
  ids: number[],
  scope: DeviceScope,
): Promise<Map<number, number>> {
  if (!ids.length) return new Map();
  if ("key" in use) {
    const rows = await db
      .select({ id: use.key, n: count() })
      .from(use.key.table)
      .where(and(inArray(use.key, ids), deviceIdInScope(use.device, scope)))
      .groupBy(use.key);
    return new Map(rows.map((r) => [r.id as number, r.n]));
  }
  const [only] = use.columns;
  if (use.columns.length === 1 && only) {
    const rows = await db
      .select({ id: only, n: count() })
      .from(devices)
      .where(and(inArray(only, ids), deviceScopeCondition(scope)))
      .groupBy(only);
    return new Map(rows.map((r) => [r.id as number, r.n]));
  }
  const rows = (await db
    .select(Object.fromEntries(use.columns.map((c, i) => [`c${i}`, c])))
    .from(devices)
    .where(and(or(...use.columns.map((c) => inArray(c, ids))), deviceScopeCondition(scope)))) as Record<
    string,
    number | null
  >[];
  const counts = new Map<number, number>();
  for (const row of rows)
    for (const id of new Set(Object.values(row)))
      if (id !== null && ids.includes(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/**
 * Refuses (409) to delete records that devices still use, anywhere: names the first such record, how many devices
 * use it, and what to do first (`remedy`, given that count).
 */
export async function refuseDeleteWhileDevicesUse(
  tx: DbOrTx,
  use: DeviceUse,
  ids: number[],
  label: string,
  remedy: (devices: number) => string,
): Promise<void> {
  const used = [...(await deviceCounts(tx, use, ids, { all: true })).entries()].find(([, n]) => n > 0);
  if (!used) return;
  const [id, n] = used;
  throw ApiError.conflict(`${label} ${id} is used by ${plural(n, "device")}; ${remedy(n)}`);
}
