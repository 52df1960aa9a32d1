import { inArray } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { templates } from "../../db/schema/index.ts";
import { builtinTemplatesByVendor } from "../templates/index.ts";

type DeviceRef = { id: number; device_vendor: string | null; device_template_id: number | null };

/**
 * Why a device cannot be backed up as it stands: it has no connection template. A vendor with several built-ins
 * (Cisco: IOS, NX-OS, ASA) gets none by default, and without this the device would be accepted and fail only at
 * its first backup. Says which to choose from and how detection chooses; undefined when a template is set.
 */
export async function missingTemplateWarning(db: DbOrTx, device: DeviceRef): Promise<string | undefined> {
  if (device.device_template_id !== null) return undefined;
  const ids = device.device_vendor
    ? ((await builtinTemplatesByVendor(db)).get(nameKey(device.device_vendor)) ?? [])
    : [];
  const detect = `POST /api/v1/devices/${device.id}/detect recognises it from the device itself`;
  if (ids.length < 2)
    return `The device has no connection template, so its backups fail: set device_template_id, or ${detect}.`;
  const names = (await db.select({ name: templates.name }).from(templates).where(inArray(templates.id, ids)))
    .map((r) => r.name)
    .sort();
  return (
    `The device has no connection template, so its backups fail: ${device.device_vendor} has several (${names.join(", ")}); ` +
    `choose one with device_template_id, or ${detect}.`
  );
}
