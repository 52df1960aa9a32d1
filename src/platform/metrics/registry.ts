import { Counter, Histogram, Registry } from "prom-client";
import type { Clock } from "../../kernel/clock.ts";
import type { Db } from "../../db/client.ts";
import type { RateLimiter } from "../http/rate-limit.ts";
import { registerDatabaseMetrics } from "./database.ts";

/** Methods kept as their own label value; anything else is `other`, so a client cannot grow the series. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export type Metrics = {
  registry: Registry;
  /** One answered request: its route template (never the raw path), method, status and seconds taken. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** The same limiter, counting each request it refuses by what it keys on (token, ip, probe). */
  countRefusals(limiter: RateLimiter): RateLimiter;
};

/**
 * One registry per app (no module-level default registry, so every test's app counts on its own). Figures the
 * API process sees itself (requests, refusals) are counted in memory; everything the collectors do is read from
 * the database when Prometheus scrapes (database.ts), so one scrape of any API process covers every collector.
 */
export function createMetrics(deps: { db: Db; clock: Clock }): Metrics {
  const registry = new Registry();
  const requests = new Histogram({
    name: "netkeep_http_request_duration_seconds",
    help: "Requests answered by this process, by route template, method and status; _count is the number of requests",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refused = new Counter({
    name: "netkeep_rate_limited_requests_total",
    help: "Requests refused with 429 by the rate limit, by what the limit counted (token, ip for unknown tokens, probe)",
    labelNames: ["key"] as const,
    registers: [registry],
  });
  registerDatabaseMetrics(registry, deps);

  // The hot path: a series' child is looked up once and kept, so a request costs one string key and one Map
  // lookup rather than prom-client's label hashing.
  type Child = ReturnType<typeof requests.labels>;
  const children = new Map<string, Child>();
  return {
    registry,
    observeRequest(route, method, status, seconds) {
      const m = METHODS.has(method) ? method : "other";
      const key = `${m} ${status} ${route}`;
      let child = children.get(key);
      if (!child) {
        child = requests.labels(route, m, String(status));
        children.set(key, child);
      }
      child.observe(seconds);
    },
    countRefusals(limiter) {
      return {
        hit(key) {
          const decision = limiter.hit(key);
          if (!decision.allowed) refused.inc({ key: key.slice(0, key.indexOf(":")) });
          return decision;
        },
        trackedKeys: () => limiter.trackedKeys(),
      };
    },
  };
}
