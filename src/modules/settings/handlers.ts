import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { getSettingsRoute, patchSettingsRoute } from "./routes.ts";
import { getSettings, serializeSettings, updateSettings } from "../../platform/settings/service.ts";

export function registerSettingsRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getSettingsRoute, async (c) =>
    c.json({ data: serializeSettings(await getSettings(c.var.services.db)) }, 200),
  );

  app.openapi(patchSettingsRoute, async (c) => {
    const { db, clock, secrets } = c.var.services;
    if (!c.var.auth.scope.all)
      throw new ApiError(403, "Settings apply to every device; changing them needs a role that sees all devices");
    const patch = c.req.valid("json");
    const after = await db.transaction((tx) => updateSettings(tx, patch, secrets, c.var.auth, clock.now()));
    return c.json({ data: serializeSettings(after) }, 200);
  });
}
