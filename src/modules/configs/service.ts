import { and, asc, count, desc, eq, inArray, or, sql, type SQLWrapper } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import {
  configChanges,
  configs,
  deviceTags,
  devices,
  JOB_OUTCOMES,
  jobs,
  tags,
  vendors,
  type JobOutcome,
} from "../../db/schema/index.ts";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { idFilter, instantBound } from "../../platform/http/filters.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { recordActivity, type Actor } from "../../platform/audit/record.ts";
import { CONFIG_FIELDS, type ConfigOut } from "./schemas.ts";
import { deleteBlobs } from "./storage/blobs.ts";
import { keepDiffsOfSuccessors } from "./history/change-diffs.ts";
import { readBlob } from "./storage/store.ts";

const lower = (column: SQLWrapper) => sql`lower(${column})`;

/** Whether a config row is the newest version of its device and command (versions count up; deleting one leaves the rest). */
export const isLatestVersion = sql<number>`${configs.version} = (select max(c2.version) from ${configs} c2 where c2.device_id = ${configs.deviceId} and c2.command = ${configs.command})`;

/** Devices carrying any of these tags (names, any case): `deviceId` is the query's device id (devices.id when joined). */
export const deviceTagFilter = (describe: string, deviceId: SQLWrapper = devices.id) => ({
  describe,
  build: (names: string[]) =>
    inArray(
      deviceId,
      sql`(select ${deviceTags.deviceId} from ${deviceTags} join ${tags} on ${tags.id} = ${deviceTags.tagId} where ${inArray(tags.nameKey, names.map(nameKey))})`,
    ),
});

export const deviceNameFilter = {
  describe: "Exact device name (any case)",
  build: (v: string[]) => inArray(devices.nameKey, v.map(nameKey)),
};

/** A time bound: an ISO-8601 instant (instantBound); a date alone is the day's start, or its end for an upper bound. */
export function timeBoundFilter(column: SQLiteColumn, name: string, bound: "from" | "to", describe: string) {
  return {
    describe,
    build: (values: string[]) => {
      const { at, dateOnly } = instantBound(name, values);
      const time = at.getTime();
      if (bound === "from") return sql`${column} >= ${time}`;
      return dateOnly ? sql`${column} < ${time + 86_400_000}` : sql`${column} <= ${time}`;
    },
  };
}

export const configListSpec: ListSpec = {
  fields: CONFIG_FIELDS,
  filters: {
    id: idFilter(configs.id, "id", "Config id"),
    device_id: idFilter(configs.deviceId, "device_id", "Device id"),
    device_name: deviceNameFilter,
    command: { describe: "Exact command, e.g. show running-config", build: (v) => inArray(configs.command, v) },
    device_category_id: idFilter(devices.categoryId, "device_category_id", "The device's category id"),
    device_tags: deviceTagFilter("Tag name (any case); a config matches if its device has any of them"),
    device_vendor: {
      describe: "The device's vendor name (any case)",
      build: (v) =>
        inArray(
          devices.vendorId,
          sql`(select ${vendors.id} from ${vendors} where ${inArray(vendors.nameKey, v.map(nameKey))})`,
        ),
    },
    download_status: {
      describe: `Outcome of the download that stored the version: ${JOB_OUTCOMES.join(", ")}`,
      example: "success",
      build: (v) => {
        const bad = v.filter((s) => !(JOB_OUTCOMES as readonly string[]).includes(s));
        if (bad.length) throw new ApiError(422, `filter[download_status] must be one of: ${JOB_OUTCOMES.join(", ")}`);
        return inArray(jobs.outcome, v as JobOutcome[]);
      },
    },
    latest: {
      describe: "true: only the newest version of each device and command; false: only older ones",
      build: (v) => {
        if (v.length !== 1 || (v[0] !== "true" && v[0] !== "false"))
          throw new ApiError(422, "filter[latest] must be true or false");
        return v[0] === "true" ? sql`(${isLatestVersion})` : sql`not (${isLatestVersion})`;
      },
    },
    date_from: timeBoundFilter(
      configs.firstSeenAt,
      "date_from",
      "from",
      "Versions first seen at or after this date or time",
    ),
    date_to: timeBoundFilter(
      configs.firstSeenAt,
      "date_to",
      "to",
      "Versions first seen at or before this time (a date includes its whole day, UTC)",
    ),
  },
  sorts: {
    id: configs.id,
    device_name: lower(devices.name),
    command: configs.command,
    version: configs.version,
    first_seen_at: configs.firstSeenAt,
    last_seen_at: configs.lastSeenAt,
    seen_count: configs.seenCount,
    size: configs.size,
    lines: configs.lines,
  },
  defaultSort: "-id",
  idColumn: configs.id,
  search: {
    describe: "Substring of the device name or the command (any case); for the configuration text use /configs/search",
    build: (term) => or(containsText(devices.name, term), containsText(configs.command, term))!,
  },
};

const selectConfigs = (db: DbOrTx) =>
  db
    .select({
      config: configs,
      deviceName: devices.name,
      latest: isLatestVersion,
      outcome: jobs.outcome,
      durationMs: sql<number | null>`json_extract(${jobs.result}, '$.duration_ms')`,
      trigger: sql<
        string | null
      >`(select ${configChanges.trigger} from ${configChanges} where ${configChanges.configId} = ${configs.id} limit 1)`,
    })
    .from(configs)
    .innerJoin(devices, eq(devices.id, configs.deviceId))
    .leftJoin(jobs, eq(jobs.id, configs.jobId));

type SelectedConfig = Awaited<ReturnType<ReturnType<typeof selectConfigs>["where"]>>[number];
export type ConfigRow = typeof configs.$inferSelect;

function serialize(r: SelectedConfig): ConfigOut {
  const c = r.config;
  return {
    id: c.id,
    device_id: c.deviceId,
    device_name: r.deviceName,
    command: c.command,
    version: c.version,
    latest: Boolean(r.latest),
    first_seen_at: c.firstSeenAt.toISOString(),
    last_seen_at: c.lastSeenAt.toISOString(),
    seen_count: c.seenCount,
    lines: c.lines,
    size: c.size,
    hash: c.blobHash,
    secrets_changed: c.secretsChanged,
    job_id: c.jobId,
    trigger: r.trigger as ConfigOut["trigger"],
    download_status: r.outcome,
    download_duration_ms: r.durationMs === null ? null : Math.round(Number(r.durationMs)),
  };
}

/** One page of the list query, with the stored rows beside the API records (the blob hash is the row's). */
export async function configPage(
  db: DbOrTx,
  scope: DeviceScope,
  q: ListQuery,
): Promise<{ out: ConfigOut; row: ConfigRow }[]> {
  const rows = await selectConfigs(db)
    .where(and(deviceScopeCondition(scope), q.where))
    .orderBy(...q.orderBy)
    .limit(q.perPage)
    .offset((q.page - 1) * q.perPage);
  return rows.map((r) => ({ out: serialize(r), row: r.config }));
}

export async function listConfigs(
  db: Db,
  scope: DeviceScope,
  q: ListQuery,
): Promise<{ total: number; rows: ConfigOut[] }> {
  const where = and(deviceScopeCondition(scope), q.where);
  const [page, [totalRow]] = await Promise.all([
    configPage(db, scope, q),
    db
      .select({ n: count() })
      .from(configs)
      .innerJoin(devices, eq(devices.id, configs.deviceId))
      .leftJoin(jobs, eq(jobs.id, configs.jobId))
      .where(where),
  ]);
  return { total: totalRow?.n ?? 0, rows: page.map((p) => p.out) };
}

/** A device's stored versions in the caller's scope, grouped by command, newest first within each; at most `limit`. */
export const deviceHistory = (db: Db, scope: DeviceScope, deviceId: number, limit: number) =>
  listConfigs(db, scope, {
    page: 1,
    perPage: limit,
    where: eq(configs.deviceId, deviceId),
    orderBy: [asc(configs.command), desc(configs.version)],
    fields: null,
  });

/** One version with its device name, or 404 when it does not exist or its device is outside the scope. */
export async function getConfig(
  db: DbOrTx,
  scope: DeviceScope,
  id: number,
): Promise<{ out: ConfigOut; row: ConfigRow }> {
  const [r] = await selectConfigs(db).where(and(eq(configs.id, id), deviceScopeCondition(scope)));
  if (!r) throw ApiError.notFound(`Config ${id}`);
  return { out: serialize(r), row: r.config };
}

export async function configText(db: DbOrTx, row: ConfigRow): Promise<string> {
  return readBlob(db, row.blobHash);
}

/** 404 unless the device exists and is in the scope; its name otherwise. */
export async function deviceInScope(db: DbOrTx, scope: DeviceScope, id: number): Promise<string> {
  const [row] = await db
    .select({ name: devices.name })
    .from(devices)
    .where(and(eq(devices.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Device ${id}`);
  return row.name;
}

/** The export's list options: the default order is device, then command, unless the query sorts otherwise. */
export const configExportSpec: ListSpec = { ...configListSpec, defaultSort: "device_name,command" };

/**
 * How many versions of one command a device has in the caller's scope, and the newest two: what deleting one
 * leaves (the version that becomes the latest, or none).
 */
export const seriesVersions = (db: Db, scope: DeviceScope, deviceId: number, command: string) =>
  listConfigs(db, scope, {
    page: 1,
    perPage: 2,
    where: and(eq(configs.deviceId, deviceId), eq(configs.command, command)),
    orderBy: [desc(configs.version)],
    fields: null,
  });

/** What a deletion answers (the API's message, the page's too). */
export const deletedConfigMessage = (id: number, blobDeleted: boolean) =>
  `Config ${id} deleted${blobDeleted ? "" : "; its text is kept for the other versions that have it"}`;

/**
 * Deletes one version with its change row. Its text goes too unless another version (of any device) has the
 * same text (texts that were deltas against it are re-encoded first); the next version's change keeps its diff as
 * text. The version before it, if any, becomes the latest by number; nothing is renumbered.
 */
export async function deleteConfig(
  db: Db,
  scope: DeviceScope,
  actor: Actor,
  id: number,
  now: Date,
): Promise<{ blobDeleted: boolean }> {
  return db.transaction(async (tx) => {
    const { out, row } = await getConfig(tx, scope, id);
    await keepDiffsOfSuccessors(tx, [id]);
    await tx.delete(configChanges).where(eq(configChanges.configId, id));
    await tx.delete(configs).where(eq(configs.id, id));
    const [other] = await tx
      .select({ id: configs.id })
      .from(configs)
      .where(eq(configs.blobHash, row.blobHash))
      .limit(1);
    if (!other) await deleteBlobs(tx, [row.blobHash]);
    await recordActivity(
      tx,
      actor,
      {
        action: "config.delete",
        subjectType: "config",
        subjectId: id,
        before: out,
        after: null,
        reach: { devices: [row.deviceId] },
      },
      now,
    );
    return { blobDeleted: !other };
  });
}
