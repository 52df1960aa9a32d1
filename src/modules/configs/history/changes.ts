/** Config changes: each new version's arrival, what it changed and what triggered the download. */
import { and, count, desc, eq, inArray, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "../../../db/client.ts";
import { configChanges, configs, devices, JOB_TRIGGERS, type JobTrigger } from "../../../db/schema/index.ts";
import { deviceIdInScope, deviceScopeCondition, type DeviceScope } from "../../../platform/auth/scope.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { idFilter } from "../../../platform/http/filters.ts";
import type { ListQuery, ListSpec } from "../../../platform/http/list.ts";
import { CHANGE_FIELDS, type ConfigChangeOut } from "../schemas.ts";
import { deviceNameFilter, deviceTagFilter, timeBoundFilter } from "../service.ts";
import { readBlobs } from "../storage/blobs.ts";
import { changeDiff } from "../storage/store.ts";

const lower = (column: SQLWrapper) => sql`lower(${column})`;
const previous = alias(configs, "previous_config");
/** The ids of the devices that meet a condition, for a filter on config_changes.device_id. */
const devicesWhere = (condition: SQL) => sql`(select ${devices.id} from ${devices} where ${condition})`;

/** What can start a download, so what filter[trigger] takes. */
export const CHANGE_TRIGGERS = JOB_TRIGGERS;

export const changeListSpec: ListSpec = {
  fields: CHANGE_FIELDS,
  filters: {
    id: idFilter(configChanges.id, "id", "Change id"),
    device_id: idFilter(configChanges.deviceId, "device_id", "Device id"),
    // On the change's device id, not the joined device: the count reads config_changes alone (changeCountQuery).
    device_name: {
      describe: deviceNameFilter.describe,
      build: (v) => inArray(configChanges.deviceId, devicesWhere(deviceNameFilter.build(v))),
    },
    device_tags: deviceTagFilter(
      "Tag name (any case); a change matches if its device has any of them",
      configChanges.deviceId,
    ),
    command: { describe: "Exact command", build: (v) => inArray(configChanges.command, v) },
    config_id: idFilter(configChanges.configId, "config_id", "The version the change produced"),
    trigger: {
      describe: `What started the download: ${JOB_TRIGGERS.join(", ")}`,
      example: JOB_TRIGGERS[0],
      build: (v) => {
        if (v.some((s) => !(JOB_TRIGGERS as readonly string[]).includes(s)))
          throw new ApiError(422, `filter[trigger] must be one of: ${JOB_TRIGGERS.join(", ")}`);
        return inArray(configChanges.trigger, v as JobTrigger[]);
      },
    },
    date_from: timeBoundFilter(configChanges.createdAt, "date_from", "from", "Changes at or after this date or time"),
    date_to: timeBoundFilter(
      configChanges.createdAt,
      "date_to",
      "to",
      "Changes at or before this time (a date includes its whole day, UTC)",
    ),
  },
  sorts: {
    id: configChanges.id,
    created_at: configChanges.createdAt,
    device_name: lower(devices.name),
    command: configChanges.command,
    lines_added: configChanges.linesAdded,
    lines_removed: configChanges.linesRemoved,
  },
  defaultSort: "-created_at",
  idColumn: configChanges.id,
};

const selectChanges = (db: DbOrTx) =>
  db
    .select({
      change: configChanges,
      deviceName: devices.name,
      version: configs.version,
      blobHash: configs.blobHash,
      secretsChanged: configs.secretsChanged,
      previousVersion: previous.version,
      previousBlobHash: previous.blobHash,
    })
    .from(configChanges)
    .innerJoin(devices, eq(devices.id, configChanges.deviceId))
    .innerJoin(configs, eq(configs.id, configChanges.configId))
    .leftJoin(previous, eq(previous.id, configChanges.previousConfigId));

type Selected = Awaited<ReturnType<ReturnType<typeof selectChanges>["where"]>>[number];

function serialize(r: Selected): ConfigChangeOut {
  const c = r.change;
  return {
    id: c.id,
    device_id: c.deviceId,
    device_name: r.deviceName,
    command: c.command,
    config_id: c.configId,
    version: r.version,
    previous_config_id: c.previousConfigId,
    previous_version: r.previousVersion,
    lines_added: c.linesAdded,
    lines_removed: c.linesRemoved,
    trigger: c.trigger,
    changed_by: c.changedBy,
    created_at: c.createdAt.toISOString(),
    secrets_changed: r.secretsChanged,
    diff: c.diff ?? "",
  };
}

/** What a diff says of secret values that changed: the texts hold only their markers, so no line shows it. */
export const SECRETS_CHANGED_NOTE = "# secrets changed (values not stored)";

const noted = (r: Selected, out: ConfigChangeOut): ConfigChangeOut =>
  r.secretsChanged
    ? { ...out, diff: out.diff ? `${SECRETS_CHANGED_NOTE}\n${out.diff}` : `${SECRETS_CHANGED_NOTE}\n` }
    : out;

const withoutDiff = ({ diff: _, ...rest }: ConfigChangeOut) => rest;

/**
 * The record with its diff, rendered from the two versions' texts (a first version's against nothing). A change
 * whose previous version was deleted kept its diff as text (change-diffs.ts); when that happened
 * after the record was read, the text is gone and the record is read again.
 */
async function withDiff(db: DbOrTx, r: Selected): Promise<ConfigChangeOut> {
  const out = serialize(r);
  if (r.change.diff) return noted(r, out);
  const texts = await readBlobs(db, [r.blobHash, ...(r.previousBlobHash === null ? [] : [r.previousBlobHash])]);
  const text = texts.get(r.blobHash);
  const previousText = r.previousBlobHash === null ? "" : texts.get(r.previousBlobHash);
  if (text === undefined || previousText === undefined) {
    const [again] = await selectChanges(db).where(eq(configChanges.id, r.change.id));
    if (!again) throw ApiError.notFound(`Config change ${r.change.id}`); // deleted with its version meanwhile
    if (again.change.diff || again.previousBlobHash !== r.previousBlobHash) return withDiff(db, again);
    throw new Error(`the texts of configuration change ${r.change.id} are missing`);
  }
  out.diff = changeDiff(previousText, text, out.command, r.previousVersion ?? 0, out.version).text;
  return noted(r, out);
}

/**
 * The list's conditions name the change's device id only (the scope and the device filters through subqueries),
 * so the count reads config_changes alone: joined with devices it looked up every matching change's device, the
 * cost of a week's changes at 20,000 devices (bench:estate). Every change has its device (deleted with it).
 */
const changeListWhere = (scope: DeviceScope, q: ListQuery) =>
  and(deviceIdInScope(configChanges.deviceId, scope), q.where);

/** The count of a list's changes, as listChanges reads it (changes-plan.test.ts asserts its query plan). */
export const changeCountQuery = (db: DbOrTx, scope: DeviceScope, q: ListQuery) =>
  db.select({ n: count() }).from(configChanges).where(changeListWhere(scope, q));

export async function listChanges(db: DbOrTx, scope: DeviceScope, q: ListQuery) {
  const [rows, [total]] = await Promise.all([
    selectChanges(db)
      .where(changeListWhere(scope, q))
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    changeCountQuery(db, scope, q),
  ]);
  return { total: total?.n ?? 0, rows: rows.map((r) => withoutDiff(serialize(r))) };
}

/** The newest changes in the scope, without a total (the dashboard's list: no count over every change). */
export async function latestChanges(db: DbOrTx, scope: DeviceScope, limit: number) {
  const rows = await selectChanges(db)
    .where(deviceScopeCondition(scope))
    .orderBy(desc(configChanges.createdAt), desc(configChanges.id))
    .limit(limit);
  return rows.map((r) => withoutDiff(serialize(r)));
}

/** One change with its diff, by its id; 404 when it is not there or its device is outside the scope. */
export async function getChange(db: DbOrTx, scope: DeviceScope, id: number): Promise<ConfigChangeOut> {
  const [row] = await selectChanges(db).where(and(eq(configChanges.id, id), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Config change ${id}`);
  return withDiff(db, row);
}

/** The change that produced configuration version `configId`, with its diff; 404 as getChange. */
export async function getChangeByConfig(db: DbOrTx, scope: DeviceScope, configId: number): Promise<ConfigChangeOut> {
  const [row] = await selectChanges(db).where(and(eq(configChanges.configId, configId), deviceScopeCondition(scope)));
  if (!row) throw ApiError.notFound(`Change of config ${configId}`);
  return withDiff(db, row);
}
