import { and, inArray, TransactionRollbackError } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { devices } from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { ApiError, type FieldErrors } from "../../platform/http/errors.ts";
import type { DeviceInputT, DevicePatchT } from "./schemas.ts";
import { createDevices, updateDevices, type WriteContext } from "./service.ts";

/** One line of an import file, already read and checked: what to do with it, or why not. */
export type PlannedRow = {
  /** The line in the file (1-based), for the report. */
  row: number;
  device_name: string;
  errors?: FieldErrors;
  create?: DeviceInputT;
  update?: DevicePatchT & { id: number };
};

export type RowOutcome = {
  row: number;
  device_name: string;
  action: "create" | "update" | "reject";
  errors?: FieldErrors;
};
export type ImportReport = { created: number; updated: number; rejected: number; rows: RowOutcome[] };

/** Rows per write call: keeps each call's IN (...) lists and reference checks small on a 10,000-row file. */
const CHUNK = 500;

export type ExistingDevice = { id: number; name: string; custom: Record<string, string | number | boolean | null> };

/** Devices in the scope whose names match under the folding rule (name-key.ts), by key: the rows an import updates rather than creates. */
export async function findDevicesByName(
  db: DbOrTx,
  scope: DeviceScope,
  names: string[],
): Promise<Map<string, ExistingDevice>> {
  const found = new Map<string, ExistingDevice>();
  const wanted = [...new Set(names.map(nameKey))];
  for (let i = 0; i < wanted.length; i += CHUNK) {
    const rows = await db
      .select({ id: devices.id, name: devices.name, custom: devices.custom })
      .from(devices)
      .where(and(inArray(devices.nameKey, wanted.slice(i, i + CHUNK)), deviceScopeCondition(scope)));
    for (const r of rows) found.set(nameKey(r.name), r);
  }
  return found;
}

/**
 * The write path's 422 (and its 403 for a credential set the caller may not use) names failing items
 * `devices.<i>.<field>`; this turns it into each item's own errors,
 * phrased as a single write would phrase them. Anything else is not about the rows and is passed on.
 */
function errorsByItem(err: unknown): Map<number, FieldErrors> {
  if (!(err instanceof ApiError) || (err.status !== 422 && err.status !== 403) || !err.errors) throw err;
  const byItem = new Map<number, FieldErrors>();
  for (const [key, messages] of Object.entries(err.errors)) {
    const match = /^devices\.(\d+)\.(.+)$/.exec(key);
    if (!match) throw err;
    const prefix = `devices.${match[1]}.`;
    const errors = byItem.get(Number(match[1])) ?? byItem.set(Number(match[1]), {}).get(Number(match[1]))!;
    errors[match[2]!] = messages.map((m) => (m.startsWith(prefix) ? m.slice(prefix.length) : m));
  }
  return byItem;
}

/**
 * Writes through the devices module's own bulk write, so every check a single POST or PATCH makes applies. That
 * write is all-or-nothing and names every failing item; the failing rows are set aside and the rest written
 * again, in a savepoint each time, until what remains lands.
 */
async function writeGoodRows(
  indexes: number[],
  write: (indexes: number[]) => Promise<unknown>,
  rejected: Map<number, FieldErrors>,
) {
  let pending = indexes;
  while (pending.length) {
    try {
      await write(pending);
      return;
    } catch (err) {
      const failed = errorsByItem(err);
      for (const [k, errors] of failed) rejected.set(pending[k]!, errors);
      pending = pending.filter((_, k) => !failed.has(k));
    }
  }
}

/**
 * Applies planned rows: the good ones are created or updated in one transaction, the bad ones reported, not
 * fatal. A dry run does exactly the same work and rolls it back, so its report is the one a real run gives.
 */
export async function applyImport(
  ctx: WriteContext,
  planned: PlannedRow[],
  options: { dryRun: boolean },
): Promise<ImportReport> {
  const rejected = new Map<number, FieldErrors>();
  planned.forEach((p, i) => p.errors && rejected.set(i, p.errors));
  const pick = (kind: "create" | "update") => planned.flatMap((p, i) => (p[kind] && !rejected.has(i) ? [i] : []));
  const creates = pick("create");
  const updates = pick("update");

  try {
    await ctx.db.transaction(async (tx) => {
      // The write functions open their own transaction; inside this one drizzle makes that a savepoint, which is
      // what lets a failed batch roll back alone. They only call .transaction() on it, which a Tx has too.
      const inner: WriteContext = { ...ctx, db: tx };
      for (let i = 0; i < creates.length; i += CHUNK) {
        await writeGoodRows(
          creates.slice(i, i + CHUNK),
          (idx) =>
            createDevices(
              inner,
              idx.map((k) => planned[k]!.create!),
              true,
            ),
          rejected,
        );
      }
      for (let i = 0; i < updates.length; i += CHUNK) {
        await writeGoodRows(
          updates.slice(i, i + CHUNK),
          (idx) =>
            updateDevices(
              inner,
              idx.map((k) => planned[k]!.update!),
              false,
              true,
            ),
          rejected,
        );
      }
      if (options.dryRun) tx.rollback();
    });
  } catch (err) {
    if (!(options.dryRun && err instanceof TransactionRollbackError)) throw err;
  }

  const rows: RowOutcome[] = planned.map((p, i) => {
    const errors = rejected.get(i);
    if (errors) return { row: p.row, device_name: p.device_name, action: "reject", errors };
    return { row: p.row, device_name: p.device_name, action: p.create ? "create" : "update" };
  });
  const count = (action: RowOutcome["action"]) => rows.filter((r) => r.action === action).length;
  return { created: count("create"), updated: count("update"), rejected: count("reject"), rows };
}
