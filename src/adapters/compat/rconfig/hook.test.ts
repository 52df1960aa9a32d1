import { Hono, type Handler } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../platform/http/env.ts";
import { hookMiddleware, type CompatHook } from "./hook.ts";

/** A route behind the hook, with an onError that answers as the app's does: JSON through the same context. */
function appWith(hook: CompatHook, handler: Handler<AppEnv>) {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => c.json({ message: err.message }, 418));
  app.get("/x", hookMiddleware(hook), handler);
  return app;
}

describe("hookMiddleware", () => {
  it("hands `response` the handler's object and writes the answer once", async () => {
    const app = appWith({ response: async (_c, body) => ({ body: { ...body, added: true }, status: 201 }) }, (c) =>
      c.json({ a: 1 }, 200, { "x-kept": "yes" }),
    );
    const res = await app.request("/x");
    expect(res.status).toBe(201);
    expect(res.headers.get("x-kept")).toBe("yes");
    expect(await res.json()).toEqual({ a: 1, added: true });
  });

  it("writes a non-2xx JSON answer as the handler made it, without `response`", async () => {
    const app = appWith({ response: async () => ({ body: "not wanted" }) }, (c) => c.json({ missing: true }, 404));
    const res = await app.request("/x");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ missing: true });
  });

  it("answers an error the handler throws as onError shapes it", async () => {
    const app = appWith({ response: async () => ({ body: "not wanted" }) }, () => {
      throw new Error("handler failed");
    });
    const res = await app.request("/x");
    expect(res.status).toBe(418);
    expect(await res.json()).toEqual({ message: "handler failed" });
  });

  it("answers an error from `response` itself as onError shapes it, not as an empty placeholder", async () => {
    const app = appWith(
      {
        response: async () => {
          throw new Error("rewrite failed");
        },
      },
      (c) => c.json({ a: 1 }),
    );
    const res = await app.request("/x");
    expect(res.status).toBe(418);
    expect(await res.json()).toEqual({ message: "rewrite failed" });
  });

  it("still rewrites an answer the handler wrote itself", async () => {
    const app = appWith(
      { response: async (_c, body) => ({ body: { ...body, added: true } }) },
      () => new Response(JSON.stringify({ raw: 1 }), { headers: { "content-type": "application/json" } }),
    );
    expect(await (await app.request("/x")).json()).toEqual({ raw: 1, added: true });
  });
});
