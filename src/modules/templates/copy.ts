import { eq } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { templates } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { checkUniqueName, freeCopyName } from "../../platform/http/resource.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { templatesResource } from "./resource.ts";

/**
 * A user template with the same code and description as template `id` (e.g. to customise a read-only built-in
 * one), named `name` or "<name> (copy)", numbered when that is taken; recorded as `template.copy`.
 */
export async function copyTemplate(
  { db, auth, now }: { db: Db; auth: AuthContext; now: Date },
  id: number,
  name: string | undefined,
) {
  return db.transaction(async (tx) => {
    const [source] = await tx.select().from(templates).where(eq(templates.id, id));
    if (!source) throw ApiError.notFound(`Template ${id}`);
    const bag = new FieldErrorBag();
    await checkUniqueName({ tx, bag }, templates.nameKey, templates.id, name, null, "name");
    bag.throwIfAny();
    const chosen = name ?? (await freeCopyName(tx, templates.nameKey, source.name));
    const [row] = await tx
      .insert(templates)
      .values({
        name: chosen,
        nameKey: nameKey(chosen),
        description: source.description,
        code: source.code,
        builtinKey: null,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: templates.id });
    const after = await templatesResource.show(tx, row!.id, auth.scope);
    await recordActivity(
      tx,
      auth,
      { action: "template.copy", subjectType: "template", subjectId: row!.id, before: null, after },
      now,
    );
    return after;
  });
}
