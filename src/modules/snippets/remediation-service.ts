import type { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { nameKey } from "../../db/name-key.ts";
import { devices, snippets } from "../../db/schema/index.ts";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { checkUniqueName, type WriteCtx } from "../../platform/http/resource.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { getResult } from "../compliance/index.ts";
import { type Snippet, snippetsResource } from "./resource.ts";

/**
 * A snippet made of the remediation lines of a compliance result's failed rules, in rule order, for the device's
 * template (POST /policy-compliance/{id}/snippet; the result page's **Create remediation snippet**). A result of
 * a device outside the caller's scope is a 404; one without a deterministic fix, or a name already taken, a 422.
 */
export async function createRemediationSnippet(
  c: Context<AppEnv>,
  resultId: number,
  requestedName: string | undefined,
): Promise<z.infer<typeof Snippet>> {
  const { db, clock } = c.var.services;
  const result = await getResult(db, c.var.auth.scope, resultId);
  const failed = result.rules.filter((r) => !r.passed && r.remediation?.length);
  if (!failed.length)
    throw ApiError.validation({
      id: [`result ${result.id} has no failed rule with a deterministic fix to turn into a snippet`],
    });
  const name: string =
    requestedName ?? `Remediation: ${result.policy_name} on ${result.device_name} (result ${result.id})`;
  const now = clock.now();
  return db.transaction(async (tx) => {
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
}
