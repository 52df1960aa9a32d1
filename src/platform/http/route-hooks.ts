import type { RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";

export type Responses = RouteConfig["responses"];

/**
 * What an adapter (the rConfig layer) does on one route, named by its operationId. The route's module never
 * knows: the hook is registered in a RouteHooks registry when the API is assembled, and mounting the route
 * rebuilds it with the hook (apiRoute's `hookRoutes`): the hook's middleware goes last in the route's chain and the
 * route's document passes through `document`.
 */
export type RouteHook = {
  /** Before validation: rewrites the request from rConfig's shape into netkeep's (may throw a 422 ApiError). */
  request?: (c: Context<AppEnv>) => Promise<void>;
  /** After the handler, on a 2xx JSON answer: the body with rConfig's fields added beside netkeep's, and its status. */
  response?: (c: Context<AppEnv>, body: Record<string, unknown>) => Promise<{ body: unknown; status?: number }>;
  /**
   * Body fields only rConfig sends, which `request` rewrites or drops before validation: they are added to the
   * route's body schema so the API description lists them (the validator never sees them).
   */
  requestFields?: z.ZodRawShape;
  /** The route's documented answers, with the fields `response` adds. */
  document?: (responses: Responses) => Responses;
  /** Appended to the route's description. */
  note?: string;
};

export const isJson = (res: Response) => /^application\/json\b/i.test(res.headers.get("content-type") ?? "");

export function hookMiddleware(hook: RouteHook): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (hook.request) await hook.request(c);
    if (!hook.response) return next();
    // The handler's JSON answer is kept as the object it made, and written once, after `response`: parsing the
    // written answer back cost a search's page of 500 hits 1.5 ms.
    const sent = keepJsonObjects(c);
    try {
      await next();
    } finally {
      sent.stop(); // an error from here on (`response` failing) is answered as any other
    }
    const object = sent.objectOf(c.res);
    if (c.res.status < 200 || c.res.status > 299 || !isJson(c.res)) {
      if (object !== undefined)
        c.res = new Response(JSON.stringify(object), { status: c.res.status, headers: c.res.headers });
      return;
    }
    const { body, status } = await hook.response(
      c,
      object === undefined ? await c.res.json() : (object as Record<string, unknown>),
    );
    c.res = new Response(JSON.stringify(body), { status: status ?? c.res.status, headers: c.res.headers });
  };
}

/**
 * Until `stop`, the context's `c.json(object)` answers a placeholder with the answer's status and headers and
 * keeps the object, which `objectOf` gives back for that placeholder (undefined for any other response).
 */
function keepJsonObjects(c: Context<AppEnv>) {
  const json = c.json;
  const kept = new WeakMap<Response, unknown>();
  c.json = ((object: unknown, ...rest: unknown[]) => {
    const res = (json as (...args: unknown[]) => Response)(null, ...rest);
    kept.set(res, object);
    return res;
  }) as typeof c.json;
  return { objectOf: (res: Response) => kept.get(res), stop: () => void (c.json = json) };
}

/** The request's JSON body as the validator will read it; undefined when it is not a JSON object. */
export async function jsonObjectBody(c: Context): Promise<Record<string, unknown> | undefined> {
  if (!/^application\/([\w.-]+\+)?json\b/i.test(c.req.header("content-type") ?? "")) return undefined;
  try {
    const body: unknown = await c.req.json();
    return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // malformed: the validator answers its 400
  }
}

/** Route hooks by operationId: the adapters register theirs while the app is assembled; the route builder reads. */
export class RouteHooks {
  readonly #hooks = new Map<string, RouteHook>();

  /** Adds hooks; an operationId already hooked is a programming error (two adapters on one route). */
  register(hooks: Record<string, RouteHook>): void {
    for (const [operationId, hook] of Object.entries(hooks)) {
      if (this.#hooks.has(operationId)) throw new Error(`route ${operationId} already has a hook`);
      this.#hooks.set(operationId, hook);
    }
  }

  get(operationId: string): RouteHook | undefined {
    return this.#hooks.get(operationId);
  }
}
