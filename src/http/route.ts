import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import { requireAbility } from "../auth/guard.ts";
import type { Ability } from "../auth/abilities.ts";
import { IdempotencyHeaders, idempotent, replayResponse } from "./idempotency.ts";

export const ErrorBody = z
  .object({
    message: z.string().openapi({ example: "device_name must be at least 5 characters" }),
    errors: z.record(z.string(), z.array(z.string())).optional(),
  })
  .openapi("Error");

const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

/** The error answers every route can give, and when. */
const commonErrors = {
  401: error("Unauthorized: the apitoken is missing, unknown, revoked or expired"),
  403: error("Invalid ability provided: the token or its owner's role lacks this route's ability"),
  429: error("Too many requests: the token's rate limit is used up; see Retry-After"),
  503: error("The database stayed busy with another writer for 10 s; nothing was changed: retry after Retry-After"),
} as const;

export const SECURITY_SCHEME = "apitoken";

type ApiRouteConfig = Omit<RouteConfig, "security" | "middleware" | "tags" | "operationId" | "summary"> & {
  operationId: string;
  summary: string;
  tag: string;
  ability: Ability;
};

/**
 * Every API route is declared through this: it fixes the security requirement, puts the ability guard in
 * front of validation, records the ability in the document (`x-ability`), and adds the error answers that
 * follow from the route's shape (404 for a path with an id, 400 and 422 for a body, 422 for parameters).
 * A create (a POST answering 201) takes an Idempotency-Key (idempotency.ts): documented here, 200 included.
 */
export function apiRoute<const R extends ApiRouteConfig>(config: R) {
  const { tag, ability, ...route } = config;
  const hasBody = Boolean(route.request?.body);
  const hasInput = hasBody || Boolean(route.request?.query) || Boolean(route.request?.params);
  const created = route.method === "post" ? (route.responses as Record<number, { content: unknown }>)[201] : undefined;
  return createRoute({
    ...route,
    ...(created ? { request: { ...route.request, headers: IdempotencyHeaders } } : {}),
    tags: [tag],
    security: [{ [SECURITY_SCHEME]: [] }],
    middleware: (created ? [requireAbility(ability), idempotent()] : [requireAbility(ability)]) as [ReturnType<typeof requireAbility>],
    "x-ability": ability,
    responses: {
      ...(hasBody ? { 400: error("Malformed JSON in the request body") } : {}),
      ...commonErrors,
      ...(route.path.includes("{") ? { 404: error("No such record, or it is outside your scope") } : {}),
      ...(hasInput || created ? { 422: error("Validation failed: `errors` names every field and its problem") } : {}),
      ...(created ? { 200: replayResponse(created), 409: error("A request with the same Idempotency-Key is still running") } : {}),
      ...route.responses,
    },
  } as unknown as Omit<R, "tag" | "ability"> & { tags: string[]; security: { apitoken: string[] }[]; middleware: [ReturnType<typeof requireAbility>] });
}

/** A path parameter holding a record id, e.g. `pathIds("id")` for `/devices/{id}`. */
export const pathIds = <const N extends string>(name: N) =>
  z.object({
    [name]: z.coerce
      .number({ error: "must be a whole number" })
      .int("must be a whole number")
      .positive("must be a positive whole number")
      .openapi({ param: { name, in: "path" }, example: 1 }),
  } as Record<N, z.ZodCoercedNumber<unknown>>);

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
