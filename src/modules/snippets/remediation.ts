import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import { devices, snippets } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { checkUniqueName, type WriteCtx } from "../../platform/http/resource.ts";
import { apiRoute, jsonBody, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { singleLine } from "../../platform/http/text.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { getResult } from "../compliance/index.ts";
import { Snippet, snippetsResource } from "./resource.ts";

const RemediationInput = z
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
    const { db, clock } = c.var.services;
    const result = await getResult(db, c.var.auth.scope, c.req.valid("param").id);
    const failed = result.rules.filter((r) => !r.passed && r.remediation?.length);
    if (!failed.length)
      throw ApiError.validation({
        id: [`result ${result.id} has no failed rule with a deterministic fix to turn into a snippet`],
      });
    const name: string =
      c.req.valid("json").name ?? `Remediation: ${result.policy_name} on ${result.device_name} (result ${result.id})`;
    const now = clock.now();
    const data = await db.transaction(async (tx) => {
      const ctx: WriteCtx = {
        tx,
        auth: c.var.auth,
        services: c.var.services,
        now,
        bag: new FieldErrorBag(),
        mode: "create",
      };
      await checkUniqueName(ctx, snippets.nameKey, snippets.id, name, null, "name");
      ctx.bag.throwIfAny();
      const [device] = await tx
        .select({ templateId: devices.templateId })
        .from(devices)
        .where(eq(devices.id, result.device_id));
      const [row] = await tx
        .insert(snippets)
        .values({
          name,
          nameKey: nameKey(name),
          content: failed.flatMap((r) => r.remediation!).join("\n"),
          description:
            `Fixes the failed rules of policy '${result.policy_name}' on ${result.device_name} (compliance result ${result.id}): ${failed.map((r) => r.description).join("; ")}`.slice(
              0,
              1000,
            ),
          templateIds: device?.templateId ? [device.templateId] : [],
          tags: ["remediation"],
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: snippets.id });
      const after = await snippetsResource.show(tx, row!.id, c.var.auth.scope);
      await recordActivity(
        tx,
        c.var.auth,
        {
          action: "snippet.create",
          subjectType: "snippet",
          subjectId: row!.id,
          after: { ...after, compliance_result_id: result.id },
        },
        now,
      );
      return after as z.infer<typeof Snippet>;
    });
    c.header("Location", new URL(`/api/${c.req.path.split("/")[2]}/snippets/${data.id}`, c.req.url).toString());
    return c.json({ data }, 201);
  });
}
