import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { apiRoute, jsonBody, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { singleLine } from "../../platform/http/text.ts";
import { createRemediationSnippet } from "./remediation-service.ts";
import { Snippet } from "./resource.ts";

export const RemediationInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"))
      .optional()
      .openapi({
        description: 'The snippet\'s name (default: "Remediation: <policy> on <device> (result <id>)")',
        example: "Fix SNMP on core-1",
      }),
  })
  .openapi("RemediationSnippetInput");

export const remediationSnippetRoute = apiRoute({
  method: "post",
  path: "/policy-compliance/{id}/snippet",
  operationId: "createRemediationSnippet",
  tag: "Snippets",
  ability: "snippets.write",
  summary: "Turn a compliance result's remediation into a snippet",
  description:
    "Creates a snippet whose content is the remediation lines of every failed rule of the result, in rule order, written for the device's " +
    "connection template; send it (dry run first) to apply the fix. 422 when no failed rule has a deterministic fix. A result of a device outside your scope answers 404.",
  request: { params: pathIds("id"), ...jsonBody(RemediationInput) },
  responses: { 201: jsonResponse(z.object({ data: Snippet }), "The created snippet; Location names its URL") },
});

export function registerRemediationRoute(app: OpenAPIHono<AppEnv>) {
  app.openapi(remediationSnippetRoute, async (c) => {
    const data = await createRemediationSnippet(c, c.req.valid("param").id, c.req.valid("json").name);
    c.header("Location", new URL(`/api/${c.req.path.split("/")[2]}/snippets/${data.id}`, c.req.url).toString());
    return c.json({ data }, 201);
  });
}
