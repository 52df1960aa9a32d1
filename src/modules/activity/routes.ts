import { z } from "@hono/zod-openapi";
import { listEnvelopeSchema, listQuerySchema } from "../../platform/http/list.ts";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { ActivityEntry, activityListSpec } from "./service.ts";

const tag = "Activity log";
const EntryParams = pathIds("id");

export const listActivityRoute = apiRoute({
  method: "get",
  path: "/activity-logs",
  operationId: "listActivityLogs",
  tag,
  ability: "users.read",
  summary: "List the audit trail",
  description:
    "One entry per write: who (user, token name, client address), what (action, record) and the changed fields with old and new values; " +
    "secrets never appear, only has_* flags. Newest first by default. Time range: filter[created_after] (inclusive) and " +
    "filter[created_before] (exclusive) take one ISO-8601 time each. A caller whose role is scoped sees only entries about no device " +
    "or only about devices in the scope: entries about other devices, their configurations, and tasks, runs or purges that reach further " +
    "(a task for every device, or naming devices, tags or categories outside the scope), and webhook entries (webhooks are for roles that see every device), " +
    "are left out of the page and the total. " +
    "The log is read-only: there are no write endpoints.",
  request: { query: listQuerySchema(activityListSpec) },
  responses: { 200: jsonResponse(listEnvelopeSchema(ActivityEntry), "A page of entries") },
});

export const getActivityRoute = apiRoute({
  method: "get",
  path: "/activity-logs/{id}",
  operationId: "getActivityLog",
  tag,
  ability: "users.read",
  summary: "Show one audit entry",
  description:
    "Who did it, with which token and from where, what it was done to, and the fields before and after (never secrets).",
  request: { params: EntryParams },
  responses: { 200: jsonResponse(z.object({ data: ActivityEntry }), "The entry") },
});
