import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { scanPresets, type tasks, type TaskType } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import type { FieldErrorBag } from "../../platform/http/errors.ts";
import { refuseScoped } from "./service.ts";

/** A discovery_scan task's preset (checked as the task is saved); null for every other type. */
export async function scanTaskValues(
  tx: DbOrTx,
  bag: FieldErrorBag,
  auth: AuthContext,
  type: TaskType,
  input: { scan_preset_id?: number | null },
  before: typeof tasks.$inferSelect | null,
  patch: boolean,
): Promise<{ scanPresetId: number | null }> {
  if (type !== "discovery_scan") {
    if (input.scan_preset_id != null)
      bag.add("scan_preset_id", `scan_preset_id is only for discovery_scan tasks, not ${type}`);
    return { scanPresetId: null };
  }
  refuseScoped(auth);
  const keep = patch && before?.type === "discovery_scan";
  const id = input.scan_preset_id !== undefined ? input.scan_preset_id : keep ? before!.scanPresetId : null;
  if (id == null) bag.add("scan_preset_id", "scan_preset_id is required for discovery_scan tasks");
  else if (!(await tx.select({ id: scanPresets.id }).from(scanPresets).where(eq(scanPresets.id, id))).length)
    bag.add("scan_preset_id", `scan_preset_id ${id} is not an existing scan preset`);
  return { scanPresetId: id ?? null };
}
