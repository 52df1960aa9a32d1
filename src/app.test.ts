import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../test/helpers/app.ts";

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

describe("probes", () => {
  it("/healthz answers while the process is up; /readyz only while the database answers", async () => {
    const other = await createTestContext();
    expect(await other.call("/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await other.call("/readyz")).toMatchObject({ status: 200, body: { status: "ready" } });
    other.client.close();
    expect(await other.call("/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await other.call("/readyz")).toMatchObject({
      status: 503,
      body: { status: "unavailable", message: "The database does not answer" },
    });
    await other.close();
  });

  it("/readyz is not ready while the database lacks a migration this release ships", async () => {
    const other = await createTestContext();
    await other.client.execute(
      "delete from __drizzle_migrations where created_at = (select max(created_at) from __drizzle_migrations)",
    );
    const res = await other.call("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/lacks migrations this release ships/);
    await other.close();
  });

  it("limits probes per address", async () => {
    const limited = await createTestContext({ rateLimitPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await limited.call(i % 2 ? "/readyz" : "/healthz")).status).toBe(200);
    const refused = await limited.call("/healthz");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await limited.close();
  });
});

describe("routing errors are JSON", () => {
  it("404 for an unknown route", async () => {
    const res = await t.call("/api/v1/no-such-thing", { token });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.body.message).toMatch(/Not found/);
  });

  it("404 naming the versions for /api/... without a version", async () => {
    for (const path of ["/api/devices", "/api/v3/devices", "/api/"]) {
      const res = await t.call(path, { token });
      expect(res.status).toBe(404);
      expect(res.body.message).toMatch(/\/api\/v1\/\.\.\. or \/api\/v2\//);
    }
  });

  it("405 with Allow when the path exists but the method does not", async () => {
    const res = await t.call("/api/v1/devices", { method: "PUT", token });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST");
    const one = await t.call("/api/v1/devices/5/enable", { method: "GET", token });
    expect(one.status).toBe(405);
    expect(one.headers.get("allow")).toBe("POST");
  });

  it("400 for malformed JSON, never a 500", async () => {
    const res = await t.call("/api/v1/devices", { method: "POST", token, rawBody: '{"device_name": ' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^Malformed JSON in the request body/);
    expect((await t.call("/api/v1/devices", { method: "POST", token, rawBody: "" })).status).toBe(400);
  });

  it("415 naming the content type to use for a body that is not JSON", async () => {
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      rawBody: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(res.status).toBe(415);
    expect(res.body.message).toMatch(/Content-Type: application\/json/);
  });

  it("422 for a JSON body that is not an object", async () => {
    const res = await t.call("/api/v1/devices", { method: "POST", token, rawBody: "[1]" });
    expect(res.status).toBe(422);
    expect(res.body.errors.body).toBeDefined();
  });
});

describe("a database another process keeps locked", () => {
  it("answers a write 503 with Retry-After once the wait runs out, and nothing is written", async () => {
    // Another process (say, a collector) holds the write lock for longer than a write waits (10 s).
    const other = createClient({ url: t.config.databaseUrl, timeout: 0, concurrency: 1 });
    const held = await other.transaction("write");
    let res;
    try {
      res = await t.call("/api/v1/categories", { method: "POST", token, body: { name: "Locked out" } });
    } finally {
      await held.rollback();
      other.close();
    }
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.body.message).toMatch(/^The database is busy with another writer/);
    const list = await t.call("/api/v1/categories?per_page=500", { token });
    expect(list.body.data.map((c: { name: string }) => c.name)).not.toContain("Locked out");
    // The lock gone, the same request goes through.
    expect((await t.call("/api/v1/categories", { method: "POST", token, body: { name: "Locked out" } })).status).toBe(
      201,
    );
  }, 20_000);
});
