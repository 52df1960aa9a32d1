import type { Context } from "hono";

/**
 * rConfig's hooks are route hooks (src/platform/http/route-hooks.ts), keyed by operationId in index.ts and registered with
 * the route builder when the API is assembled (src/adapters/api/versions.ts).
 */
export {
  hookMiddleware,
  isJson,
  jsonObjectBody,
  type Responses,
  type RouteHook as CompatHook,
} from "../../../platform/http/route-hooks.ts";

/**
 * Hands the rewritten body to the validator: hono's json() parses the cached text. (The Idempotency-Key check,
 * earlier in the chain, has already hashed the body as the client sent it.)
 */
export function replaceJsonBody(c: Context, body: unknown): void {
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(JSON.stringify(body));
}

/** Rewrites the query string the validator reads. */
export function replaceQuery(c: Context, params: URLSearchParams): void {
  const url = new URL(c.req.url);
  url.search = params.toString();
  c.req.raw = new Request(url, c.req.raw);
}

/** rConfig's answer envelope (its RespondsWithHttpStatus trait): `success` and `message` beside netkeep's body. */
export const succeeded = (body: Record<string, unknown>, message: string) => ({
  success: true as const,
  message,
  ...body,
});
