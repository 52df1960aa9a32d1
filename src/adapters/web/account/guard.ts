import type { MiddlewareHandler } from "hono";
import type { WebEnv } from "../env.ts";
import { checkedForm, csrfRefusal, currentSession } from "../guard.ts";
import { renderProblem } from "../layout.tsx";

/**
 * Your own account's pages are for any signed-in user, whatever their role: a session (a browser asking for a
 * page goes to the login form and comes back), and every form carrying the session's CSRF token.
 */
export function requireAccountSession(): MiddlewareHandler<WebEnv> {
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
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && !(await checkedForm(c, session.csrfToken)))
      return csrfRefusal(c, session);
    c.set("session", session);
    await next();
  };
}
