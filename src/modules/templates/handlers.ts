import type { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { copyTemplate } from "./copy.ts";
import { previewTemplate } from "./preview.ts";
import { type Template, templatesResource } from "./resource.ts";
import { type CopyInput, copyTemplateRoute, renderTemplateRoute } from "./routes.ts";

export function registerTemplateRoutes(app: OpenAPIHono<AppEnv>): void {
  templatesResource.register(app);
  app.openapi(renderTemplateRoute, async (c) => {
    const id = c.req.valid("param").id;
    const rendered = await previewTemplate(c.var.services.db, id, c.req.valid("json").text);
    return c.json({ data: { template_id: id, ...rendered } }, 200);
  });
  app.openapi(copyTemplateRoute, async (c) => {
    const body = (c.req.valid("json") ?? {}) as z.infer<typeof CopyInput>;
    const actor = { db: c.var.services.db, auth: c.var.auth, now: c.var.services.clock.now() };
    const data = await copyTemplate(actor, c.req.valid("param").id, body.name);
    c.header("Location", new URL(`${c.req.path.replace(/\/\d+\/copy$/, "")}/${data.id}`, c.req.url).toString());
    return c.json({ data: data as z.infer<typeof Template> }, 201);
  });
}
