import { z } from "@hono/zod-openapi";
import { apiRoute, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";

const TAG = "Zones";

const EnrollmentKey = z
  .object({ zone_id: z.number().int(), enrollment_key: z.string().openapi({ example: "nkz_9hX0..." }) })
  .openapi("ZoneEnrollmentKey");

const RemoteCollector = z
  .object({
    id: z.number().int(),
    zone_id: z.number().int(),
    zone_name: z.string(),
    name: z.string(),
    version: z.string(),
    sessions: z.number().int().openapi({ description: "Device sessions running at its last heartbeat" }),
    spool_bytes: z.number().int().openapi({ description: "Results waiting in its on-disk spool for the server" }),
    spool_dropped: z.number().int().openapi({ description: "Results its full spool dropped, oldest first" }),
    last_heartbeat_at: z.string().nullable(),
    alive: z.boolean(),
    revoked: z.boolean(),
  })
  .openapi("RemoteCollector");

const CollectorsOverview = z
  .object({
    collectors: z.array(RemoteCollector),
    zones_without_collector: z.array(z.object({ id: z.number().int(), name: z.string() })).openapi({
      description: "Remote zones no live collector serves: their jobs wait in the queue, they do not fail",
    }),
  })
  .openapi("DashboardCollectors");

const ZoneIdParams = pathIds("id");
const CollectorParams = pathIds("id").extend(pathIds("collector_id").shape);

export const rotateKeyRoute = apiRoute({
  method: "post",
  path: "/zones/{id}/enrollment-key",
  operationId: "rotateZoneEnrollmentKey",
  tag: TAG,
  ability: "system.write",
  summary: "Issue a new enrollment key for a remote zone",
  description:
    "The old key stops working at once (collectors already enrolled keep their own credentials). The answer shows the new key this once.",
  request: { params: ZoneIdParams },
  responses: {
    200: jsonResponse(z.object({ data: EnrollmentKey }), "The new key"),
    409: jsonResponse(MessageBody, "The zone is local: it has no enrollment key"),
  },
});

export const revokeKeyRoute = apiRoute({
  method: "delete",
  path: "/zones/{id}/enrollment-key",
  operationId: "revokeZoneEnrollmentKey",
  tag: TAG,
  ability: "system.write",
  summary: "Revoke a remote zone's enrollment key",
  description: "No collector can enroll with it any more; enrolled collectors keep working. POST issues a new one.",
  request: { params: ZoneIdParams },
  responses: { 200: jsonResponse(MessageBody, "Revoked") },
});

export const listCollectorsRoute = apiRoute({
  method: "get",
  path: "/zones/{id}/collectors",
  operationId: "listZoneCollectors",
  tag: TAG,
  ability: "system.read",
  summary: "List a zone's remote collectors",
  description: "Each collector enrolled in the zone with its last heartbeat: version, sessions, spool, alive.",
  request: { params: ZoneIdParams },
  responses: { 200: jsonResponse(z.object({ data: z.array(RemoteCollector) }), "The zone's collectors") },
});

export const revokeCollectorRoute = apiRoute({
  method: "post",
  path: "/zones/{id}/collectors/{collector_id}/revoke",
  operationId: "revokeZoneCollector",
  tag: TAG,
  ability: "system.write",
  summary: "Revoke a remote collector",
  description:
    "Its credential is refused from its next request on (401), and the collector stops; the jobs it held return to the queue when their leases run out.",
  request: { params: CollectorParams },
  responses: { 200: jsonResponse(MessageBody, "Revoked") },
});

export const deleteCollectorRoute = apiRoute({
  method: "delete",
  path: "/zones/{id}/collectors/{collector_id}",
  operationId: "deleteZoneCollector",
  tag: TAG,
  ability: "system.write",
  summary: "Delete a remote collector",
  description: "As revoking, and its record is removed too.",
  request: { params: CollectorParams },
  responses: { 200: jsonResponse(MessageBody, "Deleted") },
});

export const dashboardCollectorsRoute = apiRoute({
  method: "get",
  path: "/dashboard/collectors",
  operationId: "dashboardCollectors",
  tag: "Dashboard",
  ability: "system.read",
  summary: "Remote collectors and zones without one",
  description:
    "Every remote collector with its last heartbeat (version, sessions, spool), and the remote zones with no live collector. Only the zones holding devices in the token's scope.",
  responses: { 200: jsonResponse(z.object({ data: CollectorsOverview }), "The collectors") },
});
