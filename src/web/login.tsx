import type { Context, Hono } from "hono";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import { hashPassword, verifyPassword } from "../auth/passwords.ts";
import { createSession, endSession } from "../auth/sessions.ts";
import { randomSecret } from "../auth/token-value.ts";
import { findUserByName, USERNAME } from "../auth/users.ts";
import { clearSessionCookie, loginCsrfCookie, setLoginCsrfCookie, setSessionCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";
import { checkedForm, csrfRefusal, currentSession, safeNext } from "./guard.ts";
import { renderPage } from "./layout.tsx";
import { getSettings } from "../modules/settings/service.ts";
import { recordEvent } from "../modules/events/record.ts";

const HOME = "/dashboard";

let decoyHash: Promise<string> | undefined;
/** Unknown usernames cost the same password check as known ones, so timing does not tell which exist. */
const decoy = () => (decoyHash ??= hashPassword(randomSecret()));

function LoginForm(props: { csrf: string; next?: string; username?: string; error?: string; notice?: string; banner: string }) {
  return (
    <section class="card narrow">
      <h1>Log in</h1>
      {props.banner && <p class="login-banner" role="note">{props.banner}</p>}
      {props.notice && <p class="alert success" role="status">{props.notice}</p>}
      {props.error && <p class="alert error" role="alert">{props.error}</p>}
      <form method="post" action="/login">
        <input type="hidden" name="_csrf" value={props.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <label for="username">Username</label>
        <input type="text" id="username" name="username" autocomplete="username" required autofocus value={props.username ?? ""} />
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit">Log in</button>
        </div>
      </form>
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

const WRONG_LOGIN = "Wrong username or password, or the account is disabled.";

const field = (form: Record<string, unknown>, name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");

export function registerLoginRoutes(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  web.get("/", async (c) => c.redirect((await currentSession(c)) ? HOME : "/login", 302));

  web.get("/login", async (c) => {
    const next = safeNext(c.req.query("next"));
    if (await currentSession(c)) return c.redirect(next ?? HOME, 302);
    const notice = c.req.query("logged_out") !== undefined ? "You have been logged out." : undefined;
    const banner = (await getSettings(c.var.services.db)).settings.login_banner;
    return renderPage(c, 200, { title: "Log in", children: <LoginForm csrf={loginCsrf(c)} next={next} notice={notice} banner={banner} /> });
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
    const banner = (await getSettings(db)).settings.login_banner;
    const again = (status: 401 | 422 | 429, error: string) =>
      renderPage(c, status, { title: "Log in", children: <LoginForm csrf={loginCsrf(c)} next={next} username={username} error={error} banner={banner} /> });

    if (!username || !password) return again(422, "Enter both a username and a password.");
    // No account has such a name: answered before the throttle, which would otherwise keep one entry per name sent.
    if (!USERNAME.pattern.test(username)) return again(401, WRONG_LOGIN);
    const wait = throttle.begin(username, ip);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      return again(429, `Too many failed logins for '${username}' from your address. Wait ${wait} seconds, then try again.`);
    }
    const user = await findUserByName(db, username);
    const passwordOk = await verifyPassword(password, user?.passwordHash ?? (await decoy()));
    // A disabled account fails like a wrong password: the form does not confirm which accounts exist.
    if (!user || !passwordOk || !user.enabled) {
      // After the throttle, which bounds how many of these one address can write.
      const reason = !user ? "unknown user" : !passwordOk ? "wrong password" : "disabled user";
      await recordEvent(db, "user.login_failed", { username: username.slice(0, 255), ip: ip || null, reason }, clock.now());
      const lock = throttle.retryAfterSeconds(username, ip);
      return again(401, lock > 0 ? `${WRONG_LOGIN} Too many failures: wait ${lock} seconds before the next try.` : WRONG_LOGIN);
    }
    throttle.succeed(username, ip);
    const value = await createSession(db, { userId: user.id, ip, userAgent: c.req.header("user-agent"), lifetimeMs: config.sessionLifetimeMs }, clock.now());
    setSessionCookie(c, value);
    return c.redirect(next ?? HOME, 303);
  });

  web.post("/logout", async (c) => {
    const session = await currentSession(c);
    if (!session) return c.redirect("/login", 303);
    if (!(await checkedForm(c, session.csrfToken))) return csrfRefusal(c, session);
    await endSession(c.var.services.db, session.sessionId);
    clearSessionCookie(c);
    return c.redirect("/login?logged_out", 303);
  });
}
