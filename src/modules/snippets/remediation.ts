import { eq } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import { devices, snippets } from "../../db/schema/index.ts";
import type { AuthContext, Services } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { checkUniqueName, type WriteCtx } from "../../platform/http/resource.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { getResult } from "../compliance/index.ts";
import { snippetsResource } from "./resource.ts";

/**
 * A snippet whose content is the remediation lines of every failed rule of compliance result `resultId`, in rule
 * order, for the device's connection template; named `name` or "Remediation: <policy> on <device> (result <id>)".
 * 404 for a result of a device outside the scope; 422 when no failed rule has a deterministic fix.
 */
export async function createRemediationSnippet(
  services: Services,
  auth: AuthContext,
  resultId: number,
  name: string | undefined,
) {
  const { db, clock } = services;
  const result = await getResult(db, auth.scope, resultId);
  const failed = result.rules.filter((r) => !r.passed && r.remediation?.length);
  if (!failed.length)
    throw ApiError.validation({
      id: [`result ${result.id} has no failed rule with a deterministic fix to turn into a snippet`],
    });
  const chosen = name ?? `Remediation: ${result.policy_name} on ${result.device_name} (result ${result.id})`;
  const now = clock.now();
  return db.transaction(async (tx) => {
    const ctx: WriteCtx = { tx, auth, services, now, bag: new FieldErrorBag(), mode: "create" };
    await checkUniqueName(ctx, snippets.nameKey, snippets.id, chosen, null, "name");
    ctx.bag.throwIfAny();
    const [device] = await tx
      .select({ templateId: devices.templateId })
      .from(devices)
      .where(eq(devices.id, result.device_id));
    const [row] = await tx
      .insert(snippets)
      .values({
        name: chosen,
        nameKey: nameKey(chosen),
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
    const after = await snippetsResource.show(tx, row!.id, auth.scope);
    await recordActivity(
      tx,
      auth,
      {
        action: "snippet.create",
        subjectType: "snippet",
        subjectId: row!.id,
        after: { ...after, compliance_result_id: result.id },
      },
      now,
    );
    return after;
  });
}
