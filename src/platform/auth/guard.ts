import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../http/errors.ts";
import type { AppEnv } from "../http/env.ts";
import type { Ability } from "./abilities.ts";
import { externalStillGrants } from "./external-grants.ts";
import { resolveToken, touchToken } from "./tokens.ts";

function presentedToken(c: Context): string | undefined {
  // The header wins over the query string; Authorization: Bearer is deliberately not a way in.
  return c.req.header("apitoken") || c.req.query("apitoken") || undefined;
}

/** Where other APIs take a token: a caller who sent one there is told where netkeep reads it. */
export const MISPLACED_TOKEN_MESSAGE =
  "Unauthorized: send the token in the apitoken header or the apitoken query parameter; Authorization: Bearer and X-API-Key are not read";
const misplacedToken = (c: Context) =>
  /^\s*bearer\s/i.test(c.req.header("authorization") ?? "") || c.req.header("x-api-key") !== undefined;

function applyRateLimit(c: Context<AppEnv>, key: string): void {
  const decision = c.var.services.rateLimiter.hit(key);
  const headers = {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(decision.resetAt),
  };
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  if (!decision.allowed) {
    const retryAfter = Math.max(1, decision.resetAt - Math.floor(c.var.services.clock.now().getTime() / 1000));
    throw new ApiError(
      429,
      `Too many requests: the limit is ${decision.limit} per minute; retry after ${retryAfter} seconds`,
      undefined,
      {
        ...headers,
        "Retry-After": String(retryAfter),
      },
    );
  }
}

/**
 * The one gate in front of every API route: authenticate the token (401), count it against the rate limit
 * (429), then check the route's ability against the token and its owner's role (403). Runs before request
 * validation, so an anonymous caller learns nothing about a route's schema.
 */
export function requireAbility(ability: Ability): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { db, clock } = c.var.services;
    const value = presentedToken(c);
    const now = clock.now();
    let token = value ? await resolveToken(db, value, now) : null;
    // A directory or single sign-on user's role follows their groups: re-read after the refresh interval, then resolved afresh.
    if (token?.directory) {
      const granted = await externalStillGrants(
        c.var.services,
        { id: token.userId, username: token.username, ...token.directory },
        now,
      );
      token = granted ? await resolveToken(db, value!, now) : null;
    }
    if (!token) {
      applyRateLimit(c, `ip:${c.var.clientIp}`);
      throw ApiError.unauthorized(!value && misplacedToken(c) ? MISPLACED_TOKEN_MESSAGE : undefined);
    }
    applyRateLimit(c, `token:${token.tokenId}`);
    if (!token.abilities.has(ability)) throw ApiError.forbidden(ability);
    await touchToken(db, token, now);
    c.set("auth", {
      userId: token.userId,
      username: token.username,
      roleName: token.roleName,
      tokenId: token.tokenId,
      tokenName: token.tokenName,
      abilities: token.abilities,
      scope: token.scope,
      ip: c.var.clientIp,
    });
    await next();
  };
}
