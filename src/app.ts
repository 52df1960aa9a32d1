import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { createV1Api, createV2Api } from "./adapters/api/versions.ts";
import { createCollectorApi } from "./runtime/collector-api/index.ts";
import { otherVersionOnly } from "./adapters/api/other-version-only.ts";
import { systemClock } from "./kernel/clock.ts";
import { isBusy } from "./db/write-turns.ts";
import { ApiError } from "./platform/http/errors.ts";
import { failureReason, isDiskFull } from "./kernel/error-reason.ts";
import { isClientAbort } from "./platform/http/client-abort.ts";
import type { AppEnv, Services } from "./platform/http/env.ts";
import { createRateLimiter } from "./platform/http/rate-limit.ts";
import { uniqueViolationError } from "./platform/http/unique-violation.ts";
import { silentLogger, withFields } from "./kernel/logger.ts";
import { metricsHandler } from "./platform/metrics/endpoint.ts";
import { createMetrics } from "./platform/metrics/registry.ts";
import { acceptedRequestId } from "./platform/http/request-id.ts";
import { validationHook } from "./platform/http/validation.ts";
import type { ApiDocsFiles } from "./adapters/web/api-docs-files.ts";
import { createWebApp } from "./adapters/web/routes.ts";
import { webNotFound } from "./adapters/web/not-found.tsx";
import type { WebEnv } from "./adapters/web/env.ts";
import { readiness } from "./modules/system/index.ts";
import { rconfigEdge } from "./adapters/compat/rconfig/edge.ts";

export type AppDeps = Pick<Services, "db" | "config" | "secrets"> &
  Partial<Pick<Services, "clock" | "logger" | "rateLimiter" | "jobsQueued">> & {
    /** How the runtime tells the peer's address; absent under app.request() in tests. */
    clientIp?: (c: Context) => string | undefined;
    /** The generated API descriptions the web interface offers; launchers pass the STORAGE_DIR files. */
    apiDocsFiles?: ApiDocsFiles;
  };

type RouteEntry = { method: string; pattern: RegExp };

function methodNotAllowed(routes: RouteEntry[], method: string, path: string): string[] {
  const allowed = new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
  return allowed.size && !allowed.has(method) ? [...allowed].sort() : [];
}

/** Builds the whole HTTP application on the given services. It never listens: launchers and tests do that. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const clock = deps.clock ?? systemClock;
  const metrics = createMetrics({ db: deps.db, clock });
  const logger = deps.logger ?? silentLogger;
  const services: Services = {
    db: deps.db,
    config: deps.config,
    secrets: deps.secrets,
    clock,
    logger,
    rateLimiter: metrics.countRefusals(deps.rateLimiter ?? createRateLimiter(deps.config.rateLimitPerMinute, clock)),
    metrics,
    jobsQueued: deps.jobsQueued ?? (() => {}),
  };
  const logRequests = deps.config.logLevel === "debug";
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use(async (c, next) => {
    const started = performance.now();
    const requestId = acceptedRequestId(c.req.header("x-request-id"));
    // The request's own services: the same ones, with a logger that puts the request id on every line.
    c.set("services", { ...services, logger: withFields(logger, { request_id: requestId }) });
    c.set("clientIp", deps.clientIp?.(c) ?? "unknown");
    await next();
    c.header("X-Content-Type-Options", "nosniff");
    c.header("X-Request-Id", requestId);
    // The matched route's template (/api/v1/devices/:id), never the raw path; "/*" means only middleware matched.
    const route = c.req.routePath === "/*" ? "unmatched" : c.req.routePath;
    const seconds = (performance.now() - started) / 1000;
    metrics.observeRequest(route, c.req.method, c.res.status, seconds);
    if (logRequests)
      c.var.services.logger.debug("request", {
        method: c.req.method,
        route,
        status: c.res.status,
        duration_ms: Math.round(seconds * 1000),
      });
  });

  // The orchestrators' probes: no token, so limited per client address (the API's per-token limit).
  const probeLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
    const decision = services.rateLimiter.hit(`probe:${c.var.clientIp}`);
    if (!decision.allowed) {
      c.header("Retry-After", String(Math.max(1, decision.resetAt - Math.floor(clock.now().getTime() / 1000))));
      return c.json({ status: "limited", message: "Too many probes from this address: probe less often" }, 429);
    }
    await next();
  };
  app.get("/healthz", probeLimit, (c) => c.json({ status: "ok" }, 200));
  app.get("/readyz", probeLimit, async (c) => {
    const state = await readiness(services.db);
    return state.ready
      ? c.json({ status: "ready" }, 200)
      : c.json({ status: "unavailable", message: state.message }, 503);
  });

  app.get("/metrics", metricsHandler);
  // Remote collectors' own API: authenticated by the collector's credential, not a user's token (docs/zones.md).
  app.route("/", createCollectorApi());
  app.use("/api/*", rconfigEdge);
  const v1 = { version: "v1" as const, api: createV1Api() };
  const v2 = { version: "v2" as const, api: createV2Api() };
  app.use("/api/v1/*", otherVersionOnly(v1, v2));
  app.use("/api/v2/*", otherVersionOnly(v2, v1));
  app.route("/", v1.api);
  app.route("/", v2.api);
  app.route("/", createWebApp({ config: deps.config, clock, apiDocsFiles: deps.apiDocsFiles }));

  let routeTable: RouteEntry[] | undefined;
  app.notFound((c) => {
    const path = c.req.path;
    if (path.startsWith("/api/") && !/^\/api\/v[12](\/|$)/.test(path)) {
      return c.json({ message: `No API version in ${path}: use /api/v1/... or /api/v2/...` }, 404);
    }
    routeTable ??= app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({
        method: r.method,
        pattern: new RegExp("^" + r.path.replace(/:\w+\{([^}]+)\}/g, "($1)").replace(/:[^/]+/g, "[^/]+") + "/?$"),
      }));
    const allowed = methodNotAllowed(routeTable, c.req.method, path);
    // Outside the API a person is reading: a page, not JSON.
    if (!path.startsWith("/api/")) return webNotFound(c as unknown as Context<WebEnv>, allowed);
    if (allowed.length) {
      c.header("Allow", allowed.join(", "));
      return c.json({ message: `${c.req.method} is not allowed on ${path}; use ${allowed.join(", ")}` }, 405);
    }
    return c.json({ message: `Not found: ${c.req.method} ${path}` }, 404);
  });

  app.onError((thrown, c) => {
    // A full disk refuses any write, wherever it happens: said as one, never as a server error.
    const err = isDiskFull(thrown) ? ApiError.diskFull() : thrown;
    if (err !== thrown)
      c.var.services.logger.error("the disk is full; answered 507", {
        method: c.req.method,
        path: c.req.path,
        error: failureReason(thrown),
      });
    if (err instanceof ApiError) {
      for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
      return c.json({ message: err.message, ...err.fields, ...(err.errors ? { errors: err.errors } : {}) }, err.status);
    }
    const duplicate = uniqueViolationError(err);
    if (duplicate) return c.json({ message: duplicate.message, errors: duplicate.errors }, duplicate.status);
    if (err instanceof HTTPException) {
      const message =
        err.status === 400
          ? "Malformed JSON in the request body: send a JSON object"
          : err.status === 415
            ? "Unsupported Media Type: send the body as JSON with Content-Type: application/json"
            : err.message || "Request failed";
      return c.json({ message }, err.status);
    }
    if (isClientAbort(err, c)) {
      // The client closed the connection mid-body: its business, not a fault here, and the answer reaches no one.
      c.var.services.logger.info("client aborted the request", {
        method: c.req.method,
        path: c.req.path,
        reason: failureReason(err),
      });
      return c.json({ message: "The client closed the connection before the whole request body arrived" }, 400);
    }
    if (isBusy(err)) {
      // Another process (a collector storing, storage maintenance) kept the database's write lock past the wait.
      c.var.services.logger.warn("the database stayed busy; answered 503", { method: c.req.method, path: c.req.path });
      c.header("Retry-After", "5");
      return c.json(
        {
          message:
            "The database is busy with another writer (a collector or maintenance): nothing was changed; retry in a few seconds",
        },
        503,
      );
    }
    c.var.services.logger.error("unhandled error", {
      method: c.req.method,
      path: c.req.path,
      error: String(err),
      stack: (err as Error).stack,
    });
    return c.json({ message: "Server error: the request failed unexpectedly; see the server log" }, 500);
  });

  return app;
}
