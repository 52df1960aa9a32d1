import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import { FieldErrorBag } from "./errors.ts";
import { jsonObjectBody } from "./route-hooks.ts";

/**
 * The route builder's default for a JSON object body: a field the body's schema does not name is a 422 naming
 * it, never dropped in silence (a misspelt `device_vendr` would otherwise create a device without a vendor).
 * Runs after the rConfig layer, which rewrites or drops the fields rConfig's clients send, and before validation.
 * A schema that says what to do with other fields itself (strict, loose or a catchall) is left to say it.
 */
export function refuseUnknownFields(schema: unknown): MiddlewareHandler<AppEnv> | undefined {
  if (!(schema instanceof z.ZodObject) || schema._zod.def.catchall !== undefined) return undefined;
  const known = new Set(Object.keys(schema.shape));
  const list = [...known].join(", ");
  return async (c, next) => {
    const body = await jsonObjectBody(c);
    const unknown = body ? Object.keys(body).filter((key) => !known.has(key)) : [];
    if (unknown.length) {
      const bag = new FieldErrorBag();
      for (const key of unknown) bag.add(key, `${key} is not a field of this body; the fields are: ${list}`);
      bag.throwIfAny();
    }
    await next();
  };
}
