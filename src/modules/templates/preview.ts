import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { templates } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { type Rendered, renderStored } from "./render.ts";
import { parseTemplate } from "./template-schema.ts";

/** What stored template `id` would keep of a configuration text (render.ts); nothing is stored. */
export async function previewTemplate(db: DbOrTx, id: number, text: string): Promise<Rendered> {
  const [row] = await db.select({ code: templates.code }).from(templates).where(eq(templates.id, id));
  if (!row) throw ApiError.notFound(`Template ${id}`);
  const parsed = parseTemplate(row.code);
  if (!parsed.ok) throw new Error(`stored template ${id} does not parse`);
  return renderStored(text.replace(/\r\n?/g, "\n"), parsed.template);
}
