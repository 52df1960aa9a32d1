import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { changePassword, resetSecondFactor, setUserEnabled } from "./account.ts";
import { usersResource } from "./resource.ts";
import * as routes from "./routes.ts";

/** The same user routes in every version that has them (v1 and v2). */
export function registerUserRoutes(app: OpenAPIHono<AppEnv>): void {
  usersResource.register(app);
  app.openapi(routes.enableUserRoute, async (c) =>
    c.json({ data: await setUserEnabled(c, c.req.valid("param").id, true) }, 200),
  );
  app.openapi(routes.disableUserRoute, async (c) =>
    c.json({ data: await setUserEnabled(c, c.req.valid("param").id, false) }, 200),
  );
  app.openapi(routes.changeUserPasswordRoute, async (c) => {
    const username = await changePassword(c, c.req.valid("param").id, c.req.valid("json").password);
    return c.json({ message: `Password of user '${username}' changed` }, 200);
  });
  app.openapi(routes.resetSecondFactorRoute, async (c) => {
    const username = await resetSecondFactor(c, c.req.valid("param").id);
    return c.json({ message: `Second factor of user '${username}' removed` }, 200);
  });
}
