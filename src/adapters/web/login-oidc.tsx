import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { LoginThrottle } from "../../platform/auth/login-throttle.ts";
import { signInWithClaims } from "../../platform/auth/oidc/oidc-sign-in.ts";
import {
  finishSignIn,
  oidcProvider,
  ProviderError,
  startSignIn,
  endSessionUrl,
} from "../../platform/auth/oidc/provider.ts";
import { PendingSignIns } from "../../platform/auth/oidc/pending.ts";
import { keepRefreshToken } from "../../platform/auth/oidc/refresh.ts";
import { authSourceOf } from "../../platform/auth/users.ts";
import { createSession } from "../../platform/auth/sessions.ts";
import { recordSignIn, recordSignInFailure } from "../../platform/auth/sign-in.ts";
import { isSecureRequest, setSessionCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";
import { safeNext } from "./guard.ts";
import { renderPage } from "./layout.tsx";

export const OIDC_CALLBACK_PATH = "/login/oidc/callback";
/** Ties a callback to the browser that started the sign-in: it holds the state, which keys the pending entry. */
const STATE_COOKIE = "netkeep_oidc_state";
/** Lax: the provider's redirect back is a top-level navigation from another site. */
const stateFlags = (c: Context<WebEnv>) => ({
  path: "/login/oidc",
  httpOnly: true,
  sameSite: "Lax" as const,
  secure: isSecureRequest(c),
  maxAge: 600,
});

const SSO_FAILED =
  "Single sign-on did not complete. Start again from the login page; if it keeps failing, ask an administrator.";

function SignInFailed(props: { message: string }) {
  return (
    <section class="card narrow">
      <h1>Log in</h1>
      <p class="alert error" role="alert">
        {props.message}
      </p>
      <p>
        <a href="/login">Back to the login page</a>
      </p>
    </section>
  );
}

/**
 * OpenID Connect single sign-on: /login/oidc sends the browser to the provider (authorization code with PKCE),
 * /login/oidc/callback redeems the code once. Pending sign-ins live in this process and are used once, so a
 * replayed callback URL finds nothing.
 */
export function registerOidcLoginRoutes(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  const pending = new PendingSignIns();
  const redirectUri = (c: Context<WebEnv>) => `${c.var.services.config.appUrl}${OIDC_CALLBACK_PATH}`;

  const refuse = async (
    c: Context<WebEnv>,
    status: 400 | 401 | 403 | 503,
    username: string,
    userId: number | null,
    reason: string,
    message = SSO_FAILED,
  ) => {
    await recordSignInFailure(
      c.var.services,
      throttle,
      { username: username || "(single sign-on)", ip: c.var.clientIp },
      userId,
      `single sign-on: ${reason}`,
    );
    return renderPage(c, status, { title: "Log in", children: <SignInFailed message={message} /> });
  };

  web.get("/login/oidc", async (c) => {
    const { clock, logger } = c.var.services;
    let provider;
    try {
      provider = await oidcProvider(c.var.services);
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      logger.warn("single sign-on: the provider's discovery failed", { reason: err.message });
      return refuse(
        c,
        503,
        "",
        null,
        "provider discovery failed",
        "The single sign-on provider cannot be reached right now, or does not answer as the settings expect. Try again later; local accounts can still log in.",
      );
    }
    if (!provider) return c.redirect("/login", 303);
    const now = clock.now();
    const started = await startSignIn(provider, redirectUri(c), safeNext(c.req.query("next")), now);
    pending.add(started.pending, now.getTime());
    setCookie(c, STATE_COOKIE, started.pending.state, stateFlags(c));
    return c.redirect(started.url.href, 302);
  });

  web.get(OIDC_CALLBACK_PATH, async (c) => {
    const { db, clock, config, logger } = c.var.services;
    const state = getCookie(c, STATE_COOKIE);
    deleteCookie(c, STATE_COOKIE, stateFlags(c));
    const now = clock.now();
    const entry = state ? pending.take(state, now.getTime()) : undefined;
    if (!entry) return refuse(c, 400, "", null, "no pending sign-in (replayed or expired callback)");
    if (c.req.query("error"))
      return refuse(c, 401, "", null, `provider answered ${String(c.req.query("error")).slice(0, 100)}`);
    let provider;
    let finished;
    try {
      provider = await oidcProvider(c.var.services);
      if (!provider) return c.redirect("/login", 303);
      // The URL the provider redirected to, as registered (APP_URL), whatever host the proxy forwarded.
      const callback = new URL(`${redirectUri(c)}${new URL(c.req.url).search}`);
      finished = await finishSignIn(provider, callback, entry);
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      logger.warn("single sign-on refused", { reason: err.message });
      return refuse(c, 401, "", null, err.message.slice(0, 200));
    }
    const signedIn = await signInWithClaims(db, finished.claims, provider.settings.group_roles, now);
    if (signedIn.outcome !== "ok") {
      const message =
        signedIn.reason === "no group mapped to a role"
          ? "Your account at the single sign-on provider is in no group that has access to netkeep. Ask an administrator."
          : SSO_FAILED;
      return refuse(c, 403, signedIn.username, signedIn.userId, signedIn.reason, message);
    }
    // Kept sealed for re-reading the groups after the refresh interval; none (the provider gave none) means the
    // user signs in again then.
    await keepRefreshToken(c.var.services, signedIn.userId, finished.refreshToken);
    const ip = c.var.clientIp;
    await recordSignIn(
      c.var.services,
      { userId: signedIn.userId, username: signedIn.username, method: "oidc" },
      ip,
      "none",
    );
    const value = await createSession(
      db,
      { userId: signedIn.userId, ip, userAgent: c.req.header("user-agent"), lifetimeMs: config.sessionLifetimeMs },
      now,
    );
    setSessionCookie(c, value);
    return c.redirect(entry.next ?? "/dashboard", 303);
  });

  // Reached by a redirect from the logout form: the page-level CSP (form-action 'self') stops a form's redirect
  // to another site, so the browser moves on to the provider from here.
  web.get(OIDC_LOGOUT_PATH, async (c) => {
    const url = await providerLogoutUrl(c);
    if (!url) return c.redirect("/login?logged_out", 303);
    c.header("Refresh", `0;url=${url}`);
    return renderPage(c, 200, {
      title: "Logged out",
      children: (
        <section class="card narrow">
          <h1>Logged out</h1>
          <p role="status">
            You have been logged out of netkeep. <a href={url}>Continue to the single sign-on provider</a> to end your
            session there too.
          </p>
        </section>
      ),
    });
  });
}

/** Where the logout form sends a single sign-on user once their netkeep session has ended. */
export const OIDC_LOGOUT_PATH = "/login/oidc/logout";

/** The page after logout for a single sign-on user, or null for anyone else. */
export async function afterLogoutPath(c: Context<WebEnv>, userId: number): Promise<string | null> {
  return (await authSourceOf(c.var.services.db, userId)) === "oidc" ? OIDC_LOGOUT_PATH : null;
}

/**
 * The provider's end-session endpoint when it offers one (RP-initiated logout), so the provider's session ends
 * too; otherwise null.
 */
async function providerLogoutUrl(c: Context<WebEnv>): Promise<string | null> {
  try {
    const provider = await oidcProvider(c.var.services);
    return provider
      ? (endSessionUrl(provider, `${c.var.services.config.appUrl}/login?logged_out`)?.href ?? null)
      : null;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    c.var.services.logger.warn("single sign-on: the provider's logout could not be found", { reason: err.message });
    return null;
  }
}
