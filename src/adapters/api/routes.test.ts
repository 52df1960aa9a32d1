import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABILITIES, isAbility, type Ability } from "../../platform/auth/abilities.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { API_VERSIONS, openApiDocument } from "./versions.ts";

type Operation = {
  tags?: string[];
  security?: Record<string, string[]>[];
  operationId?: string;
  summary?: string;
  "x-ability"?: string;
};
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function documentedRoutes() {
  return API_VERSIONS.flatMap((version) => {
    const doc = openApiDocument(version, "http://netkeep.test");
    return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((method) => ({
        version,
        path,
        method,
        op: (item as Record<string, Operation>)[method]!,
      })),
    );
  });
}

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

describe("the route table", () => {
  const routes = documentedRoutes();

  it("has routes in both versions", () => {
    expect(routes.filter((r) => r.version === "v1").length).toBeGreaterThan(5);
    expect(routes.filter((r) => r.version === "v2").length).toBeGreaterThan(5);
  });

  it("gives every route a group tag, the apitoken security requirement, one catalogue ability, an operationId and a summary", () => {
    const problems: string[] = [];
    const operationIds = new Map<string, string>();
    for (const { version, path, method, op } of routes) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!op.tags?.length || op.tags.some((tag) => !tag.trim())) problems.push(`${where}: no group tag`);
      if (JSON.stringify(op.security) !== JSON.stringify([{ apitoken: [] }]))
        problems.push(`${where}: security is not [{apitoken: []}]`);
      if (!op["x-ability"] || !isAbility(op["x-ability"])) problems.push(`${where}: no ability from the catalogue`);
      if (!op.summary) problems.push(`${where}: no summary`);
      const key = `${version}:${op.operationId}`;
      if (!op.operationId) problems.push(`${where}: no operationId`);
      else if (operationIds.has(key))
        problems.push(`${where}: operationId ${op.operationId} also used by ${operationIds.get(key)}`);
      else operationIds.set(key, where);
    }
    expect(problems).toEqual([]);
  });

  it("guards every POST, PUT, PATCH and DELETE with a .write ability, but the reads sent by POST", () => {
    // A read sent by POST (a search too long for a query string) changes nothing: it keeps its .read ability.
    const READS_BY_POST = new Set(["searchConfigsPost", "renderTemplate"]);
    const problems = routes
      .filter(
        ({ method, op }) =>
          method !== "get" && !READS_BY_POST.has(op.operationId!) && !op["x-ability"]?.endsWith(".write"),
      )
      .map(({ version, path, method, op }) => `${version} ${method.toUpperCase()} ${path}: ${op["x-ability"]}`);
    expect(problems).toEqual([]);
    const reads = routes.filter(({ op }) => READS_BY_POST.has(op.operationId!));
    expect(reads.length, "an allow-listed read that no longer exists").toBeGreaterThan(0);
    expect(reads.filter(({ op }) => !op["x-ability"]?.endsWith(".read"))).toEqual([]);
  });

  it("documents every route the app serves under /api (nothing registered around the route helper)", () => {
    const documented = new Set(routes.map((r) => `${r.method.toUpperCase()} ${r.path.replace(/\{([^}]+)\}/g, ":$1")}`));
    const served = t.app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith("/api/"))
      .map((r) => `${r.method} ${r.path}`);
    expect(served.length).toBeGreaterThan(0);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  it("answers 401 without a token and 403 without the route's ability, on every route", async () => {
    const allBut = (ability: string) => ABILITIES.filter((a) => a !== ability) as Ability[];
    const failures: string[] = [];
    for (const { path, method, op } of routes) {
      const url = path.replace(/\{[^}]+\}/g, "1");
      const init = { method: method.toUpperCase(), body: method === "get" ? undefined : {} };
      const anonymous = await t.call(url, init);
      if (anonymous.status !== 401) failures.push(`${method} ${path} without token: ${anonymous.status}`);
      const token = await t.token(allBut(op["x-ability"]!));
      const denied = await t.call(url, { ...init, token });
      if (denied.status !== 403 || denied.body.message !== "Invalid ability provided")
        failures.push(`${method} ${path} without ability: ${denied.status}`);
    }
    expect(failures).toEqual([]);
  });
});
