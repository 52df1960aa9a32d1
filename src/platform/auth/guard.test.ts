import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { revokeToken } from "./tokens.ts";
import { apiTokens } from "../../db/schema/index.ts";
import { eq } from "drizzle-orm";
import { hashTokenValue } from "./token-value.ts";

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t.close());

const UNAUTHORIZED = { success: false, message: "Unauthorized" };
const FORBIDDEN = { success: false, message: "Invalid ability provided", required_ability: "devices.write" };
const MISPLACED = { success: false, message: expect.stringMatching(/apitoken header or the apitoken query parameter/) };

describe("API token authentication", () => {
  it("accepts a valid token in the apitoken header", async () => {
    const token = await t.token(["devices.read"]);
    const res = await t.call("/api/v1/devices", { token });
    expect(res.status).toBe(200);
  });

  it("answers 401 with no token or an unknown token", async () => {
    for (const headers of [{}, { apitoken: "nk_not-a-real-token" }] as Record<string, string>[]) {
      const res = await t.call("/api/v1/devices", { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });

  it("answers 401 to a token sent as Authorization: Bearer or X-API-Key, saying where it goes", async () => {
    const token = await t.token(["devices.read"]);
    for (const headers of [{ authorization: `Bearer ${token}` }, { "x-api-key": token }] as Record<string, string>[]) {
      const res = await t.call("/api/v1/devices", { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(MISPLACED);
    }
  });

  it("stops accepting a token on the very next request after revocation", async () => {
    const token = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/devices", { token })).status).toBe(200);
    const [row] = await t.db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, await hashTokenValue(token)));
    expect(await revokeToken(t.db, row!.id, new Date())).toBe(true);
    const res = await t.call("/api/v1/devices", { token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it("refuses expired tokens and tokens of disabled users", async () => {
    const expired = await t.token(["devices.read"], { expiresAt: new Date(Date.now() - 1000) });
    expect((await t.call("/api/v1/devices", { token: expired })).status).toBe(401);

    const userId = await t.user();
    const token = await t.token(["devices.read"], { userId });
    expect((await t.call("/api/v1/devices", { token })).status).toBe(200);
    await t.disableUser(userId);
    expect((await t.call("/api/v1/devices", { token })).status).toBe(401);
  });

  it("stores only a hash of the token value", async () => {
    const token = await t.token(["devices.read"]);
    const rows = await t.db.select().from(apiTokens);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.some((r) => r.tokenHash === token)).toBe(false);
  });

  it("accepts the token as the apitoken query parameter, and the header wins when both are sent", async () => {
    const good = await t.token(["devices.read"]);
    expect((await t.call(`/api/v1/devices?apitoken=${good}`)).status).toBe(200);
    // header valid, query junk: the header is used
    expect((await t.call("/api/v1/devices?apitoken=nk_junk", { token: good })).status).toBe(200);
    // header junk, query valid: still the header is used, so 401
    expect((await t.call(`/api/v1/devices?apitoken=${good}`, { headers: { apitoken: "nk_junk" } })).status).toBe(401);
  });

  it("keeps a query-string token out of the pagination links", async () => {
    const token = await t.token(["devices.read"]);
    const res = await t.call(`/api/v1/devices?apitoken=${token}`);
    expect(JSON.stringify(res.body.links)).not.toContain(token);
  });
});

describe("abilities", () => {
  it("answers 403 when the token lacks the route's ability", async () => {
    const token = await t.token(["devices.read"]);
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: { device_name: "edge-sw-01", device_ip: "192.0.2.9", device_vendor: "Cisco" },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it("answers 403 when the token has the ability but its owner's role does not", async () => {
    const token = await t.token(["devices.read", "devices.write"], { role: "viewer" });
    expect((await t.call("/api/v1/devices", { token })).status).toBe(200);
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: { device_name: "edge-sw-02", device_ip: "192.0.2.9", device_vendor: "Cisco" },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it("checks authentication and ability before validating the request", async () => {
    const reader = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/devices", { method: "POST", body: { device_name: "x" } })).status).toBe(401);
    expect(
      (await t.call("/api/v1/devices", { method: "POST", token: reader, body: { device_name: "x" } })).status,
    ).toBe(403);
    expect((await t.call("/api/v1/devices/not-a-number", { token: reader, method: "DELETE" })).status).toBe(403);
  });
});

describe("rate limit", () => {
  it("counts per token, sends the headers on every answer, and answers 429 with Retry-After past the limit", async () => {
    const clock = manualClock(new Date("2026-06-01T12:00:10Z"));
    const limited = await createTestContext({ rateLimitPerMinute: 3, clock });
    try {
      const a = await limited.token(["devices.read"]);
      const b = await limited.token(["devices.read"]);
      // The first request, at 12:00:10, leaves the sliding window 61 s later (the window is this second and the 60 before).
      const release = String(Date.parse("2026-06-01T12:01:11Z") / 1000);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await limited.call("/api/v1/devices", { token: a });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-ratelimit-limit")).toBe("3");
        expect(res.headers.get("x-ratelimit-reset")).toBe(release);
        remaining.push(res.headers.get("x-ratelimit-remaining")!);
      }
      expect(remaining).toEqual(["2", "1", "0"]);

      const over = await limited.call("/api/v1/devices", { token: a });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBe("61");
      expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(over.headers.get("x-ratelimit-reset")).toBe(release);
      expect(over.body.message).toMatch(/Too many requests/);

      // another token has its own budget
      expect((await limited.call("/api/v1/devices", { token: b })).status).toBe(200);

      clock.advance(60_000);
      expect((await limited.call("/api/v1/devices", { token: a })).status).toBe(429);
      clock.advance(1_000); // 12:01:11, the Retry-After given above
      expect((await limited.call("/api/v1/devices", { token: a })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("passes no more than the limit in any 60 s, across a clock minute, and Retry-After is when a place frees", async () => {
    const clock = manualClock(new Date("2026-06-01T12:00:56Z"));
    const limited = await createTestContext({ rateLimitPerMinute: 600, clock });
    try {
      const token = await limited.token(["devices.read"]);
      const statuses = async (count: number) => {
        const seen: number[] = [];
        for (let i = 0; i < count; i++) seen.push((await limited.call("/api/v1/devices", { token })).status);
        return seen;
      };
      // 150 in each second from :56 to :59: the whole budget
      for (let second = 0; second < 4; second++) {
        expect((await statuses(150)).every((s) => s === 200)).toBe(true);
        clock.advance(1_000);
      }
      // :00 to :03 of the next minute: a fixed clock-minute window would start afresh here
      for (let second = 0; second < 4; second++) {
        expect(await statuses(5)).toEqual([429, 429, 429, 429, 429]);
        clock.advance(1_000);
      }
      // 12:01:04: the :56 requests leave the window at 12:01:57 (61 s after), not before
      const refused = await limited.call("/api/v1/devices", { token });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe(String(57 - 4));
      clock.advance((57 - 4) * 1000 - 1);
      expect((await limited.call("/api/v1/devices", { token })).status).toBe(429);
      clock.advance(1);
      // exactly the 150 places the :56 second held come free
      const freed = await statuses(151);
      expect(freed.filter((s) => s === 200)).toHaveLength(150);
      expect(freed.at(-1)).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
