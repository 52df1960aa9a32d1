import type { Context, MiddlewareHandler } from "hono";
import { externalStillGrants } from "../../platform/auth/external-grants.ts";
import { resolveSession, type WebSession } from "../../platform/auth/sessions.ts";
import { clearSessionCookie, sessionCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";
import { renderProblem } from "./layout.tsx";

/**
 * The session behind the request's cookie, if any. Only the cookie counts: an `apitoken` header or query is
 * never looked at here, so an API token opens nothing in the web interface.
 */
export async function currentSession(c: Context<WebEnv>): Promise<WebSession | null> {
  const value = sessionCookie(c);
  if (!value) return null;
  const { db, clock, config } = c.var.services;
  const now = clock.now();
  let session = await resolveSession(db, value, now, config.sessionLifetimeMs);
  // A directory or single sign-on user's role follows their groups: re-read after the refresh interval, then resolved afresh.
  if (session?.directory) {
    const granted = await externalStillGrants(
      c.var.services,
      { id: session.userId, username: session.username, ...session.directory },
      now,
    );
    session = granted ? await resolveSession(db, value, now, config.sessionLifetimeMs) : null;
  }
  // A sign-in waiting for its second factor keeps its cookie: the second-factor page needs it.
  if (!session && !(await resolveSession(db, value, now, config.sessionLifetimeMs, true))) clearSessionCookie(c);
  return session;
}

/**
 * Same-origin paths only, so the login form cannot be used to bounce a user to another site; printable ASCII
 * only, as a Location header must be (a browser sends anything else percent-encoded).
 */
export const safeNext = (next: string | undefined) =>
  next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : undefined;

const wantsPage = (c: Context) => c.req.method === "GET" && (c.req.header("accept") ?? "").includes("text/html");

/**
 * Settings are for logged-in administrators. No session: a browser asking for a page goes to the login form
 * (and comes back after), anything else gets 401. A session of any other role: 403.
 */
export function requireAdminSession(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const session = await currentSession(c);
    if (!session) {
      if (wantsPage(c)) {
        const url = new URL(c.req.url);
        return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 302);
      }
      return renderProblem(c, 401, {
        title: "Log in first",
        message: "This page needs a web session; API tokens are not accepted by the web interface.",
        next: { href: "/login", label: "Log in" },
      });
    }
    if (!session.isAdmin) {
      return renderProblem(
        c,
        403,
        {
          title: "Administrators only",
          message: `REST API Access settings are for users with the admin role; you are logged in as '${session.username}' with the role '${session.roleName}'.`,
        },
        session,
      );
    }
    c.set("session", session);
    await next();
  };
}

function sameString(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A browser's Origin, when it sends one, must be this site (as reached, or as APP_URL names it). */
function foreignOrigin(c: Context<WebEnv>): boolean {
  const origin = c.req.header("origin");
  if (!origin) return false;
  const own = [new URL(c.req.url).origin, new URL(c.var.services.config.appUrl).origin];
  return !own.includes(origin);
}

export const csrfRefusal = (c: Context<WebEnv>, session?: WebSession) =>
  renderProblem(
    c,
    403,
    {
      title: "Form refused",
      message:
        "The form did not carry a valid security token (it may be from an older page, another tab, or another site). Nothing was changed; reload the page and try again.",
      next: session ? { href: "/", label: "Back to the start" } : { href: "/login", label: "Back to the login page" },
    },
    session,
  );

/** Checks a submitted form's `_csrf` against the expected token; returns the parsed form when it matches. */
export async function checkedForm(
  c: Context<WebEnv>,
  expected: string,
): Promise<Record<string, string | File | (string | File)[]> | null> {
  if (foreignOrigin(c)) return null;
  const type = c.req.header("content-type") ?? "";
  // Every form here is url-encoded; a multipart body (which a malformed one makes the parser throw on) is refused.
  if (!type.startsWith("application/x-www-form-urlencoded")) return null;
  const form = await c.req.parseBody({ all: true });
  const token = form._csrf;
  return typeof token === "string" && expected && sameString(token, expected) ? form : null;
}

/** Every request but GET and HEAD behind the admin guard: the form must carry this session's CSRF token, or nothing happens (403). */
export function requireCsrf(): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const form = await checkedForm(c, c.var.session.csrfToken);
    if (!form) return csrfRefusal(c, c.var.session);
    await next();
  };
}
