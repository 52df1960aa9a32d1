import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { templates } from "../../db/schema/index.ts";
import type { AppEnv } from "../../http/env.ts";
import { ApiError, FieldErrorBag } from "../../http/errors.ts";
import { checkUniqueName } from "../../http/resource.ts";
import { apiRoute, jsonResponse, pathIds } from "../../http/route.ts";
import { recordActivity } from "../activity/record.ts";
import { Template, templatesResource } from "./resource.ts";

const CopyInput = z
  .object({
    name: z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters").optional()
      .openapi({ description: "The copy's name; left out: \"<name> (copy)\", numbered when that is taken", example: "cisco-ios-lab" }),
  })
  .openapi("TemplateCopyInput");

const IdParams = pathIds("id");

export const copyTemplateRoute = apiRoute({
  method: "post", path: "/templates/{id}/copy", operationId: "copyTemplate", tag: "Templates", ability: "templates.write",
  summary: "Copy a template",
  description: "Makes a user template with the same code and description, e.g. to customise a read-only built-in one. The body is optional.",
  request: { params: IdParams, body: { required: false, content: { "application/json": { schema: CopyInput } } } },
  responses: { 201: jsonResponse(z.object({ data: Template }), "The copy; Location names its URL") },
});

/** "<name> (copy)", then "(copy 2)", "(copy 3)" ... the first one no template has. */
async function freeCopyName(tx: DbOrTx, name: string): Promise<string> {
  const base = `${name} (copy`;
  const taken = new Set(
    (await tx.select({ name: templates.name }).from(templates).where(sql`lower(${templates.name}) like ${base.toLowerCase().replace(/[\\%_]/g, (m) => "\\" + m) + "%"} escape '\\'`))
      .map((r) => r.name.toLowerCase()),
  );
  for (let n = 1; ; n++) {
    const candidate = `${base}${n === 1 ? "" : ` ${n}`})`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}

export function registerTemplateRoutes(app: OpenAPIHono<AppEnv>): void {
  templatesResource.register(app);
  app.openapi(copyTemplateRoute, async (c) => {
    const id = c.req.valid("param").id;
    const body = (c.req.valid("json") ?? {}) as z.infer<typeof CopyInput>;
    const { db, clock } = c.var.services;
    const data = await db.transaction(async (tx) => {
      const [source] = await tx.select().from(templates).where(eq(templates.id, id));
      if (!source) throw ApiError.notFound(`Template ${id}`);
      const now = clock.now();
      const bag = new FieldErrorBag();
      await checkUniqueName({ tx, bag, auth: c.var.auth, services: c.var.services, now, mode: "create" }, templates.name, templates.id, body.name, null, "name");
      bag.throwIfAny();
      const name = body.name ?? (await freeCopyName(tx, source.name));
      const [row] = await tx.insert(templates)
        .values({ name, description: source.description, code: source.code, builtinKey: null, createdAt: now, updatedAt: now })
        .returning({ id: templates.id });
      const after = await templatesResource.show(tx, row!.id, c.var.auth.scope);
      await recordActivity(tx, c.var.auth, { action: "template.copy", subjectType: "template", subjectId: row!.id, before: null, after }, now);
      return after;
    });
    c.header("Location", new URL(`${c.req.path.replace(/\/\d+\/copy$/, "")}/${data.id}`, c.req.url).toString());
    return c.json({ data: data as z.infer<typeof Template> }, 201);
  });
}
