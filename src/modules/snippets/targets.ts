import { and, asc, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { deviceTags, devices, vendors } from "../../db/schema/index.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import type { RenderedTarget } from "./deployments.ts";
import { deviceVariables, renderLines } from "./render.ts";

export type TargetLists = { deviceIds: number[]; categoryIds: number[]; tagIds: number[] };

/**
 * The enabled devices a deploy reaches, inside the caller's scope, by name. A device id that does not exist and
 * one outside the scope get the same answer (422 naming the item), so a scoped user learns nothing of the
 * second; categories and tags reach only the devices the scope holds.
 */
export async function resolveTargets(db: DbOrTx, scope: DeviceScope, lists: TargetLists) {
  const reach: SQL[] = [];
  if (lists.deviceIds.length) reach.push(inArray(devices.id, lists.deviceIds));
  if (lists.categoryIds.length) reach.push(inArray(devices.categoryId, lists.categoryIds));
  if (lists.tagIds.length)
    reach.push(
      inArray(
        devices.id,
        sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, lists.tagIds)})`,
      ),
    );
  if (!reach.length) throw ApiError.validation({ devices: ["name at least one device, category or tag to deploy to"] });
  const rows = await db
    .select({ device: devices, vendorName: vendors.name })
    .from(devices)
    .leftJoin(vendors, eq(vendors.id, devices.vendorId))
    .where(and(or(...reach), deviceScopeCondition(scope)))
    .orderBy(asc(devices.name), asc(devices.id));
  const found = new Set(rows.map((r) => r.device.id));
  const bag = new FieldErrorBag();
  lists.deviceIds.forEach((id, i) => {
    if (!found.has(id)) bag.add(`devices.${i}`, `devices.${i} ${id} is not an existing device`);
  });
  bag.throwIfAny();
  return rows.filter((r) => r.device.enabled);
}

export type TargetDevice = Awaited<ReturnType<typeof resolveTargets>>[number];

/**
 * Every target's exact lines, or one 422 naming each missing variable and the device that lacks it (a device
 * field or custom attribute may exist on one device and not another).
 */
export function renderTargets(
  targets: TargetDevice[],
  content: string,
  rollback: string,
  dynamicVars: Record<string, string>,
): RenderedTarget[] {
  const bag = new FieldErrorBag();
  const out: RenderedTarget[] = [];
  for (const { device, vendorName } of targets) {
    const values = {
      ...deviceVariables({
        id: device.id,
        name: device.name,
        ip: device.ip,
        model: device.model,
        vendorName,
        port: device.portOverride,
        custom: device.custom,
      }),
      ...dynamicVars,
    };
    const lines = renderLines(content, values);
    const rollbackLines = renderLines(rollback, values);
    const missing = [
      ...new Set([...(lines.ok ? [] : lines.missing), ...(rollbackLines.ok ? [] : rollbackLines.missing)]),
    ];
    for (const name of missing)
      bag.add(
        `dynamic_vars.${name}`,
        `variable {${name}} has no value for device ${device.id} (${device.name}): send it in dynamic_vars or set the custom attribute`,
      );
    if (lines.ok && rollbackLines.ok)
      out.push({
        deviceId: device.id,
        deviceName: device.name,
        lines: lines.lines,
        rollbackLines: rollbackLines.lines,
      });
  }
  bag.throwIfAny();
  return out;
}
