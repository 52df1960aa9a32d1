import type { Context, Hono } from "hono";
import type { LoginThrottle } from "../../platform/auth/login-throttle.ts";
import { createSession, endSession } from "../../platform/auth/sessions.ts";
import { randomSecret } from "../../platform/auth/token-value.ts";
import { secondFactorState } from "../../platform/auth/mfa/second-factor.ts";
import { checkSignIn, recordSignIn } from "../../platform/auth/sign-in.ts";
import { clearSessionCookie, loginCsrfCookie, setLoginCsrfCookie, setSessionCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";
import { checkedForm, csrfRefusal, currentSession, safeNext } from "./guard.ts";
import { renderPage } from "./layout.tsx";
import { getSettings } from "../../platform/settings/service.ts";
import { afterLogoutPath, registerOidcLoginRoutes } from "./login-oidc.tsx";

export const HOME = "/dashboard";
/** Where a sign-in that still needs its second factor (or its enrolment) goes. */
export const SECOND_FACTOR_PATH = "/login/second-factor";

type LoginPageSettings = { banner: string; ssoLabel: string | null };

async function loginPageSettings(c: Context<WebEnv>): Promise<LoginPageSettings> {
  const { settings } = await getSettings(c.var.services.db);
  return { banner: settings.login_banner, ssoLabel: settings.oidc.enabled ? settings.oidc.button_label : null };
}

function LoginForm(
  props: { csrf: string; next?: string; username?: string; error?: string; notice?: string } & LoginPageSettings,
) {
  return (
    <section class="card narrow">
      <h1>Log in</h1>
      {props.banner && (
        <p class="login-banner" role="note">
          {props.banner}
        </p>
      )}
      {props.notice && (
        <p class="alert success" role="status">
          {props.notice}
        </p>
      )}
      {props.error && (
        <p class="alert error" role="alert">
          {props.error}
        </p>
      )}
      <form method="post" action="/login">
        <input type="hidden" name="_csrf" value={props.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <label for="username">Username</label>
        <input
          type="text"
          id="username"
          name="username"
          autocomplete="username"
          required
          autofocus
          value={props.username ?? ""}
        />
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit">Log in</button>
        </div>
      </form>
      {props.ssoLabel && (
        <p class="actions">
          <a class="button" href={`/login/oidc${props.next ? `?next=${encodeURIComponent(props.next)}` : ""}`}>
            Sign in with {props.ssoLabel}
          </a>
        </p>
      )}
    </section>
  );
}

/** The login form's double-submit token: reused while the browser keeps the cookie, so two tabs both work. */
function loginCsrf(c: Context<WebEnv>): string {
  const existing = loginCsrfCookie(c);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = randomSecret();
  setLoginCsrfCookie(c, value);
  return value;
}

export const field = (form: Record<string, unknown>, name: string) =>
  typeof form[name] === "string" ? (form[name] as string) : "";

export function registerLoginRoutes(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  web.get("/", async (c) => c.redirect((await currentSession(c)) ? HOME : "/login", 302));

  web.get("/login", async (c) => {
    const next = safeNext(c.req.query("next"));
    if (await currentSession(c)) return c.redirect(next ?? HOME, 302);
    const notice = c.req.query("logged_out") !== undefined ? "You have been logged out." : undefined;
    return renderPage(c, 200, {
      title: "Log in",
      children: <LoginForm csrf={loginCsrf(c)} next={next} notice={notice} {...(await loginPageSettings(c))} />,
    });
  });

  web.post("/login", async (c) => {
    const expected = loginCsrfCookie(c);
    const form = expected ? await checkedForm(c, expected) : null;
    if (!form) return csrfRefusal(c);
    const { db, clock, config } = c.var.services;
    const username = field(form, "username").trim();
    const password = field(form, "password");
    const next = safeNext(field(form, "next"));
    const ip = c.var.clientIp;
    const page = await loginPageSettings(c);
    const again = (status: 401 | 422 | 429 | 503, error: string) =>
      renderPage(c, status, {
        title: "Log in",
        children: <LoginForm csrf={loginCsrf(c)} next={next} username={username} error={error} {...page} />,
      });

    const result = await checkSignIn(c.var.services, throttle, { username, password, ip });
    if (!result.ok) {
      if (result.retryAfter) c.header("Retry-After", String(result.retryAfter));
      return again(result.status, result.message);
    }
    // A local user with a second factor, or whom the policy demands one of, proves it (or enrols) first.
    const pending = result.method === "local" && (await secondFactorState(db, result.userId));
    if (pending && (pending.enabled || pending.required)) {
      const value = await createSession(
        db,
        {
          userId: result.userId,
          ip,
          userAgent: c.req.header("user-agent"),
          lifetimeMs: config.sessionLifetimeMs,
          secondFactorPending: true,
        },
        clock.now(),
      );
      setSessionCookie(c, value);
      return c.redirect(`${SECOND_FACTOR_PATH}${next ? `?next=${encodeURIComponent(next)}` : ""}`, 303);
    }
    await recordSignIn(c.var.services, result, ip, "none");
    const value = await createSession(
      db,
      { userId: result.userId, ip, userAgent: c.req.header("user-agent"), lifetimeMs: config.sessionLifetimeMs },
      clock.now(),
    );
    setSessionCookie(c, value);
    return c.redirect(next ?? HOME, 303);
  });

  registerOidcLoginRoutes(web, throttle);

  web.post("/logout", async (c) => {
    const session = await currentSession(c);
    if (!session) return c.redirect("/login", 303);
    if (!(await checkedForm(c, session.csrfToken))) return csrfRefusal(c, session);
    await endSession(c.var.services.db, session.sessionId);
    clearSessionCookie(c);
    return c.redirect((await afterLogoutPath(c, session.userId)) ?? "/login?logged_out", 303);
  });
}
