import { and, count, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { deviceIdInScope, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import {
  DEPLOYMENT_DEVICE_STATUSES,
  DEPLOYMENT_STATES,
  snippetDeploymentDevices,
  snippetDeployments,
  type DeploymentDeviceStatus,
} from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { idFilter } from "../../platform/http/filters.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const oneOf = (name: string, allowed: readonly string[], values: string[]) => {
  const bad = values.find((s) => !allowed.includes(s));
  if (bad) throw new ApiError(422, `filter[${name}] must be one of: ${allowed.join(", ")}; '${bad}' is not`);
  return values;
};

export const deploymentListSpec: ListSpec = {
  fields: [
    "id",
    "snippet_id",
    "snippet_name",
    "kind",
    "task_run_id",
    "state",
    "canary",
    "stop_on_failure",
    "concurrency",
    "stopped_reason",
    "device_counts",
    "created_at",
    "finished_at",
    "devices_url",
  ],
  filters: {
    snippet_id: idFilter(snippetDeployments.snippetId, "snippet_id", "Snippet id"),
    task_run_id: idFilter(snippetDeployments.taskRunId, "task_run_id", "Task run id"),
    state: {
      describe: `running or finished`,
      example: "finished",
      build: (v) =>
        inArray(snippetDeployments.state, oneOf("state", DEPLOYMENT_STATES, v) as (typeof DEPLOYMENT_STATES)[number][]),
    },
  },
  sorts: {
    id: snippetDeployments.id,
    created_at: snippetDeployments.createdAt,
    finished_at: snippetDeployments.finishedAt,
  },
  defaultSort: "-id",
  idColumn: snippetDeployments.id,
  search: {
    describe: "Substring of the snippet's name",
    build: (term) => containsText(snippetDeployments.snippetName, term),
  },
};

export const deploymentDeviceListSpec: ListSpec = {
  fields: [
    "id",
    "device_id",
    "device_name",
    "position",
    "status",
    "lines",
    "rollback_lines",
    "job_id",
    "message",
    "result",
    "transcript",
    "finished_at",
  ],
  filters: {
    status: {
      describe: DEPLOYMENT_DEVICE_STATUSES.join(", "),
      example: "failed",
      build: (v) =>
        inArray(
          snippetDeploymentDevices.status,
          oneOf("status", DEPLOYMENT_DEVICE_STATUSES, v) as DeploymentDeviceStatus[],
        ),
    },
    device_id: idFilter(snippetDeploymentDevices.deviceId, "device_id", "Device id"),
  },
  sorts: {
    position: snippetDeploymentDevices.position,
    device_name: sql`lower(${snippetDeploymentDevices.deviceName})`,
    status: snippetDeploymentDevices.status,
  },
  defaultSort: "position",
  idColumn: snippetDeploymentDevices.id,
  search: {
    describe: "Substring of the device name",
    build: (term) => containsText(snippetDeploymentDevices.deviceName, term),
  },
};

/** The rows of a deployment's devices a caller may see: devices in the scope (a deleted device is in nobody's). */
export const visibleDeploymentDevices = (scope: DeviceScope): SQL | undefined =>
  deviceIdInScope(snippetDeploymentDevices.deviceId, scope);

/** The conditions selecting one deployment's devices that a caller may see (for parseListQuery). */
export const deploymentDevicesOf = (deploymentId: number, scope: DeviceScope): (SQL | undefined)[] => [
  eq(snippetDeploymentDevices.deploymentId, deploymentId),
  visibleDeploymentDevices(scope),
];

/** Deployments a scoped user sees: those with at least one device in the scope. */
export function visibleDeployments(scope: DeviceScope): SQL | undefined {
  const devices = visibleDeploymentDevices(scope);
  return devices
    ? inArray(
        snippetDeployments.id,
        sql`(select ${snippetDeploymentDevices.deploymentId} from ${snippetDeploymentDevices} where ${devices})`,
      )
    : undefined;
}

export type Links = { base: string; version: string };

export async function serializeDeployments(
  db: DbOrTx,
  scope: DeviceScope,
  links: Links,
  rows: (typeof snippetDeployments.$inferSelect)[],
) {
  const counts = new Map<number, Record<DeploymentDeviceStatus, number>>();
  if (rows.length) {
    const tallies = await db
      .select({ id: snippetDeploymentDevices.deploymentId, status: snippetDeploymentDevices.status, n: count() })
      .from(snippetDeploymentDevices)
      .where(
        and(
          inArray(
            snippetDeploymentDevices.deploymentId,
            rows.map((r) => r.id),
          ),
          visibleDeploymentDevices(scope),
        ),
      )
      .groupBy(snippetDeploymentDevices.deploymentId, snippetDeploymentDevices.status);
    for (const t of tallies) {
      const c =
        counts.get(t.id) ??
        counts
          .set(
            t.id,
            Object.fromEntries(DEPLOYMENT_DEVICE_STATUSES.map((s) => [s, 0])) as Record<DeploymentDeviceStatus, number>,
          )
          .get(t.id)!;
      c[t.status] = t.n;
    }
  }
  return rows.map((r) => ({
    id: r.id,
    snippet_id: r.snippetId,
    snippet_name: r.snippetName,
    kind: r.kind,
    task_run_id: r.taskRunId,
    state: r.state,
    canary: r.canary,
    stop_on_failure: r.stopOnFailure,
    concurrency: r.concurrency,
    stopped_reason: r.stoppedReason,
    device_counts:
      counts.get(r.id) ??
      (Object.fromEntries(DEPLOYMENT_DEVICE_STATUSES.map((s) => [s, 0])) as Record<DeploymentDeviceStatus, number>),
    created_at: r.createdAt.toISOString(),
    finished_at: iso(r.finishedAt),
    devices_url: `${links.base}/api/${links.version}/snippet-deployments/${r.id}/devices`,
  }));
}

export async function getDeployment(db: DbOrTx, scope: DeviceScope, links: Links, id: number) {
  const [row] = await db
    .select()
    .from(snippetDeployments)
    .where(and(eq(snippetDeployments.id, id), visibleDeployments(scope)));
  if (!row) throw ApiError.notFound(`Snippet deployment ${id}`);
  return (await serializeDeployments(db, scope, links, [row]))[0]!;
}

export const serializeDeploymentDevice = (r: typeof snippetDeploymentDevices.$inferSelect) => ({
  id: r.id,
  device_id: r.deviceId,
  device_name: r.deviceName,
  position: r.position,
  status: r.status,
  lines: r.lines,
  rollback_lines: r.rollbackLines,
  job_id: r.jobId,
  message: r.message,
  result: r.result ?? null,
  transcript: r.transcript,
  finished_at: iso(r.finishedAt),
});

/** A page of deployments; `q.where` carries visibleDeployments(scope) (parseListQuery's extra condition). */
export async function listDeployments(db: DbOrTx, scope: DeviceScope, links: Links, q: ListQuery) {
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(snippetDeployments)
      .where(q.where)
      .orderBy(...q.orderBy, desc(snippetDeployments.id))
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(snippetDeployments).where(q.where),
  ]);
  return { total: Number(total?.n ?? 0), rows: await serializeDeployments(db, scope, links, rows) };
}

/**
 * A page of one deployment's devices; `q.where` names the deployment and carries visibleDeploymentDevices(scope)
 * (parseListQuery's extra conditions), after getDeployment has answered 404 for one the caller may not see.
 */
export async function listDeploymentDevices(db: DbOrTx, q: ListQuery) {
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(snippetDeploymentDevices)
      .where(q.where)
      .orderBy(...q.orderBy)
      .limit(q.perPage)
      .offset((q.page - 1) * q.perPage),
    db.select({ n: count() }).from(snippetDeploymentDevices).where(q.where),
  ]);
  return { total: Number(total?.n ?? 0), rows: rows.map(serializeDeploymentDevice) };
}
