import type { Context, Handler } from "hono";
import { resolveToken } from "../auth/tokens.ts";
import { ApiError } from "../http/errors.ts";
import type { AppEnv } from "../http/env.ts";

/**
 * Prometheus sends a token as `Authorization: Bearer <token>` (its `authorization` scrape setting) or, in older
 * setups, as a query parameter; the API's own `apitoken` header works too. Only here is Bearer accepted: /metrics
 * is not part of the REST API, whose conventions refuse it.
 */
function presentedToken(c: Context): string | undefined {
  const authorization = c.req.header("authorization");
  const bearer = authorization && /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  return bearer || c.req.header("apitoken") || c.req.query("token") || undefined;
}

/** GET /metrics: the Prometheus text format, for a token with system.read whose role sees every device (or anyone with METRICS_PUBLIC=on). */
export const metricsHandler: Handler<AppEnv> = async (c) => {
  const { db, clock, config, metrics } = c.var.services;
  if (!config.metricsPublic) {
    const value = presentedToken(c);
    const token = value ? await resolveToken(db, value, clock.now()) : null;
    if (!token)
      throw new ApiError(
        401,
        "Unauthorized: send a token with system.read as Authorization: Bearer <token> or ?token=, or set METRICS_PUBLIC=on",
      );
    if (!token.abilities.has("system.read")) throw ApiError.forbidden("system.read");
    // The figures cover every device, so a role that sees only some of them would learn about the rest.
    if (!token.scope.all)
      throw new ApiError(403, "The metrics cover every device: use a token whose role sees all devices");
  }
  const body = await metrics.registry.metrics();
  return c.body(body, 200, { "Content-Type": metrics.registry.contentType });
};
