import { count, max, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { deviceCounts, devices, type DeviceStatus } from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";

/** A device's last download as device_counts classes it (the same CASE as the triggers of its migration). */
const lastDownloadClass = sql<string>`case when ${devices.lastDownloadOutcome} is null then 'none'
  when ${devices.lastDownloadOutcome} in ('success', 'unchanged') then 'good' else 'bad' end`;

/**
 * How many devices are in each state (enabled, status, backed up, last download's class). The whole fleet reads
 * device_counts, a few rows the triggers keep on every write; a scoped caller counts its own devices' rows, which
 * hold their last download (no search of their jobs). state-counts-plan.test.ts asserts both plans.
 */
export const deviceTallyQuery = (db: DbOrTx, scope: DeviceScope) =>
  scope.all
    ? db
        .select({
          enabled: deviceCounts.enabled,
          status: deviceCounts.status,
          backedUp: deviceCounts.backedUp,
          lastDownload: sql<string>`${deviceCounts.lastDownload}`,
          n: deviceCounts.n,
        })
        .from(deviceCounts)
    : db
        .select({
          enabled: devices.enabled,
          status: devices.status,
          backedUp: sql<boolean>`${devices.lastBackupAt} is not null`.mapWith(Boolean),
          lastDownload: lastDownloadClass,
          n: count(),
        })
        .from(devices)
        .where(deviceScopeCondition(scope))
        .groupBy(sql`1, 2, 3, 4`);

/** The scope's newest backup (a min/max search of devices_last_backup_idx for the whole fleet). */
export const newestBackupQuery = (db: DbOrTx, scope: DeviceScope) =>
  db
    .select({ at: max(devices.lastBackupAt) })
    .from(devices)
    .where(deviceScopeCondition(scope));

/** When the scope's newest last download ended (devices_last_download_idx for the whole fleet). */
export const newestDownloadQuery = (db: DbOrTx, scope: DeviceScope) =>
  db
    .select({ at: max(devices.lastDownloadAt) })
    .from(devices)
    .where(deviceScopeCondition(scope));

export type DeviceStateCounts = {
  total: number;
  /** Disabled devices. */
  disabled: number;
  /** Enabled devices by status. */
  enabledByStatus: Record<DeviceStatus, number>;
  /** Devices never backed up, and those of them enabled. */
  neverBackedUp: number;
  enabledNeverBackedUp: number;
  /** Enabled devices backed up once whose last download failed. */
  enabledBackedUpFailing: number;
  /** Devices with a finished download, and those whose last one backed them up (success or unchanged). */
  downloaded: number;
  lastDownloadGood: number;
};

/** The scope's devices counted by state: what the dashboard, the device summary and rConfig's figures show. */
export async function deviceStateCounts(db: DbOrTx, scope: DeviceScope): Promise<DeviceStateCounts> {
  const out: DeviceStateCounts = {
    total: 0,
    disabled: 0,
    enabledByStatus: { unknown: 0, up: 0, unreachable: 0 },
    neverBackedUp: 0,
    enabledNeverBackedUp: 0,
    enabledBackedUpFailing: 0,
    downloaded: 0,
    lastDownloadGood: 0,
  };
  for (const { enabled, status, backedUp, lastDownload, n } of await deviceTallyQuery(db, scope)) {
    out.total += n;
    if (enabled) out.enabledByStatus[status] = (out.enabledByStatus[status] ?? 0) + n;
    else out.disabled += n;
    if (!backedUp) out.neverBackedUp += n;
    if (enabled && !backedUp) out.enabledNeverBackedUp += n;
    if (enabled && backedUp && lastDownload === "bad") out.enabledBackedUpFailing += n;
    if (lastDownload !== "none") out.downloaded += n;
    if (lastDownload === "good") out.lastDownloadGood += n;
  }
  return out;
}

/** The scope's newest backup and newest last download, each null when there is none. */
export async function newestBackupAndDownload(db: DbOrTx, scope: DeviceScope) {
  const [[backup], [download]] = await Promise.all([newestBackupQuery(db, scope), newestDownloadQuery(db, scope)]);
  return { lastBackupAt: backup?.at ?? null, lastDownloadAt: download?.at ?? null };
}
