import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../../platform/http/env.ts";
import { isJson } from "./hook.ts";

/** rConfig's middleware (ApiV1TokenAuth) answers this to a token sent under the parameter name of older releases. */
export const API_TOKEN_MESSAGE = "Token param name needs to be updated to apitoken.";

/**
 * In front of every /api route: `?api_token=` answers rConfig's 422 before authentication, and every error body
 * carries `success: false` beside its message (rConfig's RespondsWithHttpStatus trait), which rConfig clients test.
 */
export const rconfigEdge: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.query("api_token") !== undefined) return c.json({ success: false, message: API_TOKEN_MESSAGE }, 422);
  await next();
  if (c.res.status < 400 || !isJson(c.res)) return;
  const body: unknown = await c.res
    .clone()
    .json()
    .catch(() => undefined);
  if (!body || typeof body !== "object" || Array.isArray(body) || "success" in body) return;
  c.res = new Response(JSON.stringify({ success: false, ...body }), { status: c.res.status, headers: c.res.headers });
};
