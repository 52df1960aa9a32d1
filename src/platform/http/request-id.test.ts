import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../../kernel/logger.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let token: string;
const lines: Record<string, unknown>[] = [];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  // At debug the app logs one line per request, so every answer below has a log line to look for.
  t = await createTestContext({
    env: { LOG_LEVEL: "debug" },
    logger: createLogger((line) => lines.push(JSON.parse(line)), { level: "debug" }),
  });
  token = await t.token();
});
afterAll(() => t.close());

const logged = (requestId: string) => lines.filter((l) => l.request_id === requestId);

it("echoes a sane X-Request-Id and puts it on the request's log line", async () => {
  const res = await t.request("/api/v1/devices", { token, headers: { "x-request-id": "lb-7f3a:2026/06/01.42" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toBe("lb-7f3a:2026/06/01.42");
  expect(logged("lb-7f3a:2026/06/01.42")).toEqual([
    expect.objectContaining({ level: "debug", msg: "request", method: "GET", route: "/api/v1/devices", status: 200 }),
  ]);
});

it("generates one when absent, on answers of every kind: errors, unknown paths, probes, pages", async () => {
  for (const [path, status] of [
    ["/api/v1/devices", 401],
    ["/api/v1/devices/99999", 404],
    ["/api/v9/x", 404],
    ["/healthz", 200],
    ["/metrics", 401],
  ] as const) {
    const res = await t.request(path, { headers: path === "/api/v1/devices/99999" ? { apitoken: token } : {} });
    expect(res.status).toBe(status);
    const id = res.headers.get("x-request-id")!;
    expect(id, path).toMatch(UUID);
    expect(logged(id), path).toHaveLength(1);
  }
});

it("replaces one that is too long or holds characters a log or a header should not carry", async () => {
  for (const bad of ["x".repeat(129), "two words", 'quote"d', "semi;colon", "tab\there", "é-accent"]) {
    const res = await t.request("/healthz", { headers: { "x-request-id": bad } });
    const id = res.headers.get("x-request-id")!;
    expect(id, bad).toMatch(UUID);
    expect(
      lines.some((l) => l.request_id === bad),
      bad,
    ).toBe(false);
  }
  // The longest accepted.
  const longest = "a".repeat(128);
  expect((await t.request("/healthz", { headers: { "x-request-id": longest } })).headers.get("x-request-id")).toBe(
    longest,
  );
});
