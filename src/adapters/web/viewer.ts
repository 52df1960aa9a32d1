import type { Context, MiddlewareHandler } from "hono";
import type { Ability } from "../../platform/auth/abilities.ts";
import { roleGrant } from "../../platform/auth/role-grant.ts";
import type { WebSession } from "../../platform/auth/sessions.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import type { WebEnv } from "./env.ts";
import { currentSession } from "./guard.ts";
import { renderProblem } from "./layout.tsx";

/**
 * The logged-in user as the API's services know a caller: the role's abilities and device scope, read per
 * request (a role change applies at once, as for tokens), and no token. Pages pass `auth` to the same services
 * the API handlers call, so a page shows and does exactly what the API would for this user.
 */
export async function viewerAuth(c: Context<WebEnv>, session: WebSession): Promise<AuthContext> {
  const { abilities, scope } = await roleGrant(c.var.services.db, session.roleName);
  return {
    userId: session.userId,
    username: session.username,
    roleName: session.roleName,
    tokenId: null,
    tokenName: "web session",
    abilities,
    scope,
    ip: c.var.clientIp,
  };
}

/**
 * The guard of every fleet page: a session (a browser asking for a page goes to the login form and comes back
 * after; anything else 401), then the page's ability, as the API route it mirrors declares it (403 naming it); null
 * for a page every logged-in user may open (their own tokens).
 * Sets `session` and `auth` for the page.
 */
export function requirePage(ability: Ability | null): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const session = await currentSession(c);
    if (!session) {
      if (c.req.method === "GET") {
        const url = new URL(c.req.url);
        return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 302);
      }
      return renderProblem(c, 401, {
        title: "Log in first",
        message: "This page needs a web session.",
        next: { href: "/login", label: "Log in" },
      });
    }
    const auth = await viewerAuth(c, session);
    if (ability && !auth.abilities.has(ability)) {
      return renderProblem(
        c,
        403,
        {
          title: "Not for your role",
          message: `This page needs the ${ability} ability; the role '${session.roleName}' lacks it.`,
          next: { href: "/", label: "Back to the start" },
        },
        session,
      );
    }
    c.set("session", session);
    c.set("auth", auth);
    await next();
  };
}
