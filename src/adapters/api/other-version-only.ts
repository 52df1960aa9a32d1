import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import type { ApiVersion } from "./versions.ts";

const withoutVersion = (path: string) => path.replace(/^\/api\/v\d+/, "");
const staticRoutes = (api: OpenAPIHono<AppEnv>) =>
  new Set(
    api.routes
      .filter((r) => r.method !== "ALL" && !r.path.includes(":"))
      .map((r) => `${r.method} ${withoutVersion(r.path)}`),
  );

/**
 * A static path only the other version serves (GET /policy-compliance/export is v2's) answers 404 under this
 * version, which says where it is, instead of reaching a route of this version whose `{id}` would take the
 * path's last segment ("export") and answer a 422 about a whole number.
 */
export function otherVersionOnly(
  own: { version: ApiVersion; api: OpenAPIHono<AppEnv> },
  other: { version: ApiVersion; api: OpenAPIHono<AppEnv> },
): MiddlewareHandler<AppEnv> {
  const ownRoutes = staticRoutes(own.api);
  const only = new Set([...staticRoutes(other.api)].filter((route) => !ownRoutes.has(route)));
  return async (c, next) => {
    const path = withoutVersion(c.req.path).replace(/(.)\/$/, "$1");
    if (!only.has(`${c.req.method} ${path}`)) return next();
    return c.json(
      { message: `Not found: ${c.req.method} ${c.req.path}; it is served as /api/${other.version}${path}` },
      404,
    );
  };
}
