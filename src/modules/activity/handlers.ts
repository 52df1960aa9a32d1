import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { getActivityRoute, listActivityRoute } from "./routes.ts";
import { activityListSpec, getActivity, listActivity } from "./service.ts";

export function registerActivityRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listActivityRoute, async (c) => {
    const q = parseListQuery(c, activityListSpec);
    const { total, rows } = await listActivity(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(getActivityRoute, async (c) =>
    c.json({ data: await getActivity(c.var.services.db, c.var.auth.scope, c.req.valid("param").id) }, 200),
  );
}
