import { describe, expect, it } from "vitest";
import { API_VERSIONS, createVersionApi } from "./versions.ts";

type Route = { method: string; path: string };

const isParam = (segment: string) => segment.startsWith(":");

/**
 * Whether `earlier` takes requests meant for `later`: Hono tries routes in registration order, so a parameter
 * segment registered first (/configs/:id) answers a static path registered after it (/configs/search) with its
 * own 404 or 422. Same method, same number of segments, `earlier` has a parameter where `later` has a fixed word,
 * and every other segment is equal or a parameter in `earlier`.
 */
function shadows(earlier: Route, later: Route): boolean {
  if (earlier.method !== later.method) return false;
  const a = earlier.path.split("/");
  const b = later.path.split("/");
  if (a.length !== b.length) return false;
  let paramOverWord = false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (!isParam(a[i]!)) return false;
    if (!isParam(b[i]!)) paramOverWord = true;
  }
  return paramOverWord;
}

/** Every pair where an earlier route takes a later one's requests, as "METHOD earlier <- later". */
function shadowed(routes: readonly Route[]): string[] {
  const found: string[] = [];
  routes.forEach((later, j) => {
    for (const earlier of routes.slice(0, j))
      if (shadows(earlier, later)) found.push(`${later.method} ${earlier.path} <- ${later.path}`);
  });
  return found;
}

describe("route order in the versioned APIs", () => {
  for (const version of API_VERSIONS) {
    it(`${version}: no route with a parameter is registered before a fixed path it would take`, () => {
      // A route's validators and handler are separate entries: its first is where it was registered.
      const seen = new Set<string>();
      const routes = createVersionApi(version).routes.filter(
        (r) =>
          r.method !== "ALL" &&
          !r.path.includes("*") &&
          !seen.has(`${r.method} ${r.path}`) &&
          seen.add(`${r.method} ${r.path}`),
      );
      expect(routes.length).toBeGreaterThan(5);
      expect(shadowed(routes)).toEqual([]);
    });
  }

  it("recognises a parameter route registered first as taking the fixed path", () => {
    const byId = { method: "GET", path: "/api/v1/configs/:id" };
    const search = { method: "GET", path: "/api/v1/configs/search" };
    expect(shadowed([byId, search])).toEqual(["GET /api/v1/configs/:id <- /api/v1/configs/search"]);
    expect(shadowed([search, byId])).toEqual([]);
    expect(shadowed([byId, { method: "POST", path: "/api/v1/configs/search" }])).toEqual([]);
    expect(shadowed([byId, { method: "GET", path: "/api/v1/devices/search" }])).toEqual([]);
  });
});
