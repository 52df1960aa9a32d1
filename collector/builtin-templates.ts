import { isNotNull } from "drizzle-orm";
import type { Db } from "../src/db/client.ts";
import { templates } from "../src/db/schema/index.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";
import { parseTemplateOnce } from "./template-cache.ts";

/** A built-in template as the database holds it, parsed: the families detection and SNMP identification know. */
export type BuiltinTemplate = { id: number; key: string; template: ConnectionTemplate };

/** The built-in templates that parse (one that does not is left out, as it could not run either). */
export async function builtinTemplates(db: Db): Promise<BuiltinTemplate[]> {
  const rows = await db
    .select({ id: templates.id, key: templates.builtinKey, code: templates.code })
    .from(templates)
    .where(isNotNull(templates.builtinKey));
  return rows.flatMap((row) => {
    const parsed = parseTemplateOnce(row.code);
    return parsed.ok ? [{ id: row.id, key: row.key!, template: parsed.template }] : [];
  });
}
