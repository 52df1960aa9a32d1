import { createRoute, z, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { requireAbility } from "../auth/guard.ts";
import type { Ability } from "../auth/abilities.ts";
import { bodyGate, DEFAULT_BODY_LIMIT, sizeInWords } from "./body.ts";
import type { AppEnv } from "./env.ts";
import { IdempotencyHeaders, idempotent, replayResponse } from "./idempotency.ts";
import { hookMiddleware, type RouteHook, type RouteHooks } from "./route-hooks.ts";
import { refuseUnknownFields } from "./unknown-fields.ts";

export const ErrorBody = z
  .object({
    success: z
      .literal(false)
      .openapi({ description: "Always false: rConfig clients test it (src/adapters/compat/rconfig)" }),
    message: z.string().openapi({ example: "device_name must be at least 5 characters" }),
    errors: z.record(z.string(), z.array(z.string())).optional(),
    required_ability: z
      .string()
      .optional()
      .openapi({ description: "On a 403: the ability the route needs", example: "devices.write" }),
  })
  .openapi("Error");

const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

/** The error answers every route can give, and when. */
const commonErrors = {
  401: error(
    "Unauthorized: the apitoken is missing, unknown, revoked or expired (a token sent as Authorization: Bearer or X-API-Key is told where it goes)",
  ),
  403: error(
    "Invalid ability provided: the token or its owner's role lacks this route's ability, named in required_ability",
  ),
  429: error("Too many requests: the token's rate limit is used up; see Retry-After"),
  503: error("The database stayed busy with another writer for 10 s; nothing was changed: retry after Retry-After"),
  507: error(
    "Insufficient Storage: the disk is full (or the database reached its size limit); nothing was written: free space, then retry",
  ),
} as const;

export const SECURITY_SCHEME = "apitoken";

/** Every route can answer it: the rConfig layer's answer to the token sent as rConfig's old `api_token`. */
const API_TOKEN_422 = "The token came as the api_token query parameter: send it as apitoken (rConfig's answer)";

type ApiRouteConfig = Omit<RouteConfig, "security" | "middleware" | "tags" | "operationId" | "summary"> & {
  operationId: string;
  summary: string;
  tag: string;
  ability: Ability;
  /** The largest request body the route takes, in bytes (DEFAULT_BODY_LIMIT unless it needs more). */
  bodyLimit?: number;
};

/**
 * Every API route is declared through this: it fixes the security requirement, puts the ability guard in
 * front of validation, records the ability in the document (`x-ability`), and adds the error answers that
 * follow from the route's shape (404 for a path with an id, 400, 413, 415 and 422 for a body, 422 for
 * parameters). A route with a body gets the body gate (body.ts) between the guard and the body's parser.
 * A create (a POST answering 201) takes an Idempotency-Key (idempotency.ts): documented here, 200 included.
 * Where an adapter's clients expect another shape (the rConfig layer), its hook goes in last, by operationId: the
 * route is rebuilt with the hook when it is mounted on an app that `hookRoutes` gave the hooks to.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const route = buildRoute(config, undefined);
  Object.defineProperty(route, ROUTE_CONFIG, { value: config });
  return route;
}

const ROUTE_CONFIG = Symbol("apiRoute config");

/**
 * Makes `api.openapi(route, ...)` mount each apiRoute with its hook from `hooks`, if it has one. The registry is
 * read at mount time, so hooks registered while the app is assembled reach routes declared at import time.
 */
export function hookRoutes(api: OpenAPIHono<AppEnv>, hooks: RouteHooks): void {
  const mount = api.openapi;
  api.openapi = ((route: Parameters<typeof mount>[0], ...rest: unknown[]) => {
    const config = (route as { [ROUTE_CONFIG]?: ApiRouteConfig })[ROUTE_CONFIG];
    const hook = config ? hooks.get(config.operationId) : undefined;
    return (mount as (...args: unknown[]) => unknown)(hook ? buildRoute(config!, hook) : route, ...rest);
  }) as typeof api.openapi;
}

function buildRoute<const R extends ApiRouteConfig>(config: R, compat: RouteHook | undefined) {
  const { tag, ability, bodyLimit = DEFAULT_BODY_LIMIT, ...route } = config;
  const body = route.request?.body;
  const hasBody = Boolean(body);
  const takesJson = Boolean(body?.content?.["application/json"]);
  const hasInput = hasBody || Boolean(route.request?.query) || Boolean(route.request?.params);
  const middleware: MiddlewareHandler<AppEnv>[] = [requireAbility(ability)];
  if (body) middleware.push(bodyGate({ limit: bodyLimit, json: takesJson, optional: body.required !== true }));
  const created = route.method === "post" ? (route.responses as Record<number, { content: unknown }>)[201] : undefined;
  if (created) middleware.push(idempotent());
  if (compat) middleware.push(hookMiddleware(compat));
  const jsonSchema = (body?.content?.["application/json"] as { schema?: unknown } | undefined)?.schema;
  const strict = refuseUnknownFields(
    jsonSchema instanceof z.ZodObject && compat?.requestFields ? jsonSchema.extend(compat.requestFields) : jsonSchema,
  );
  if (strict) middleware.push(strict);
  const responses = {
    ...(hasBody
      ? {
          400: error(
            takesJson ? "Malformed JSON in the request body, or a body that is not UTF-8" : "Malformed request body",
          ),
        }
      : {}),
    ...commonErrors,
    ...(route.path.includes("{") ? { 404: error("No such record, or it is outside your scope") } : {}),
    ...(hasBody ? { 413: error(`The request body is larger than ${sizeInWords(bodyLimit)}, this route's limit`) } : {}),
    ...(takesJson ? { 415: error("The body is not JSON: send it with Content-Type: application/json") } : {}),
    422: error(
      hasInput || created || compat?.request
        ? `Validation failed: \`errors\` names every field and its problem${strict ? " (a body field this route does not know included)" : ""}`
        : API_TOKEN_422,
    ),
    ...(created
      ? { 200: replayResponse(created), 409: error("A request with the same Idempotency-Key is still running") }
      : {}),
    ...route.responses,
  };
  const request =
    compat?.requestFields && jsonSchema instanceof z.ZodObject
      ? {
          ...route.request,
          body: {
            ...body!,
            content: { ...body!.content, "application/json": { schema: jsonSchema.extend(compat.requestFields) } },
          },
        }
      : route.request;
  return createRoute({
    ...route,
    request,
    ...(compat?.note ? { description: [route.description, compat.note].filter(Boolean).join(" ") } : {}),
    ...(created ? { request: { ...request, headers: IdempotencyHeaders } } : {}),
    tags: [tag],
    security: [{ [SECURITY_SCHEME]: [] }],
    middleware,
    "x-ability": ability,
    ...(hasBody ? { "x-body-limit": bodyLimit } : {}),
    responses: compat?.document ? compat.document(responses) : responses,
  } as unknown as Omit<R, "tag" | "ability" | "bodyLimit"> & {
    tags: string[];
    security: { apitoken: string[] }[];
    middleware: MiddlewareHandler<AppEnv>[];
  });
}

/**
 * A whole number sent as text (a path or query parameter): decimal digits only, at most 15 so it stays exact.
 * `0x10`, `1e1`, `+1`, ` 1` and `1.0` are refused rather than read as numbers, as Number() would.
 */
export const decimalNumber = (min: number, max?: number) => {
  let n = z
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(min, `must be at least ${min}`);
  if (max !== undefined) n = n.max(max, `must be at most ${max}`);
  return z.preprocess((v) => (typeof v === "string" && /^\d{1,15}$/.test(v) ? Number(v) : v), n);
};

/** A path parameter holding a record id, e.g. `pathIds("id")` for `/devices/{id}`: 1 or more, decimal digits only. */
export const pathIds = <const N extends string>(name: N) =>
  z.object({
    [name]: decimalNumber(1).openapi({ param: { name, in: "path" }, example: 1 }),
  } as Record<N, ReturnType<typeof decimalNumber>>);

/** A query flag: "true" or "false" (a query string has no booleans). */
export const trueOrFalse = (description: string) =>
  z.enum(["true", "false"], { error: "must be true or false" }).optional().openapi({ description, example: "true" });

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  body: { required: true, description, content: { "application/json": { schema } } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const MessageBody = z.object({ message: z.string() }).openapi("Message");
