import type { Context, Hono } from "hono";
import type { LoginThrottle } from "../../platform/auth/login-throttle.ts";
import {
  beginEnrolment,
  confirmEnrolment,
  secondFactorState,
  verifySecondFactor,
} from "../../platform/auth/mfa/second-factor.ts";
import { createSession, endSession, resolveSession, type WebSession } from "../../platform/auth/sessions.ts";
import { recordSignIn, recordSignInFailure } from "../../platform/auth/sign-in.ts";
import { EnrolmentForm, RecoveryCodes } from "./account/enrolment.tsx";
import { webActor } from "./actor.ts";
import { sessionCookie, setSessionCookie } from "./cookies.ts";
import type { WebEnv } from "./env.ts";
import { checkedForm, csrfRefusal, safeNext } from "./guard.ts";
import { renderPage } from "./layout.tsx";
import { field, HOME, SECOND_FACTOR_PATH } from "./login.tsx";

function CodeForm(props: { csrf: string; next?: string; error?: string }) {
  return (
    <section class="card narrow">
      <h1>Second factor</h1>
      {props.error && (
        <p class="alert error" role="alert">
          {props.error}
        </p>
      )}
      <form method="post" action={SECOND_FACTOR_PATH}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <label for="code">Code from your authenticator app, or a recovery code</label>
        <input type="text" id="code" name="code" autocomplete="one-time-code" required autofocus />
        <div class="actions">
          <button type="submit">Sign in</button>
        </div>
      </form>
    </section>
  );
}

/** The session of a sign-in whose password was proven and whose second factor is still due, if any. */
async function pendingSession(c: Context<WebEnv>): Promise<WebSession | null> {
  const value = sessionCookie(c);
  const { db, clock, config } = c.var.services;
  return value ? resolveSession(db, value, clock.now(), config.sessionLifetimeMs, true) : null;
}

/** The second factor is proven: the waiting session gives way to a full one under a new value. */
async function completeSignIn(c: Context<WebEnv>, pending: WebSession, via: "totp" | "recovery_code"): Promise<void> {
  const { db, clock, config } = c.var.services;
  await endSession(db, pending.sessionId);
  const value = await createSession(
    db,
    {
      userId: pending.userId,
      ip: c.var.clientIp,
      userAgent: c.req.header("user-agent"),
      lifetimeMs: config.sessionLifetimeMs,
    },
    clock.now(),
  );
  setSessionCookie(c, value);
  await recordSignIn(
    c.var.services,
    { userId: pending.userId, username: pending.username, method: "local" },
    c.var.clientIp,
    via,
  );
}

/**
 * The sign-in's second step: a code (TOTP or recovery) for a user with a second factor, or enrolment for one
 * whom the policy demands it of. Attempts count against the same per-username-and-address throttle as passwords.
 */
export function registerSecondFactorRoutes(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  const page = async (
    c: Context<WebEnv>,
    pending: WebSession,
    status: 200 | 401 | 422 | 429,
    next: string | undefined,
    error?: string,
  ) => {
    const { db, config } = c.var.services;
    const state = await secondFactorState(db, pending.userId);
    const children = state.enabled ? (
      <CodeForm csrf={pending.csrfToken} next={next} error={error} />
    ) : (
      <EnrolmentForm
        action={SECOND_FACTOR_PATH}
        csrf={pending.csrfToken}
        next={next}
        error={error}
        enrolment={await beginEnrolment(c.var.services, pending.userId, config.appName)}
      />
    );
    return renderPage(c, status, { title: "Second factor", children });
  };

  web.get(SECOND_FACTOR_PATH, async (c) => {
    const pending = await pendingSession(c);
    if (!pending) return c.redirect("/login", 302);
    return page(c, pending, 200, safeNext(c.req.query("next")));
  });

  web.post(SECOND_FACTOR_PATH, async (c) => {
    const pending = await pendingSession(c);
    if (!pending) return c.redirect("/login", 303);
    const form = await checkedForm(c, pending.csrfToken);
    if (!form) return csrfRefusal(c);
    const { clock } = c.var.services;
    const ip = c.var.clientIp;
    const next = safeNext(field(form, "next"));
    const code = field(form, "code");
    const wait = throttle.begin(pending.username, ip);
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      return page(c, pending, 429, next, `Too many wrong codes. Wait ${wait} seconds, then try again.`);
    }
    const actor = webActor(pending, ip);
    const state = await secondFactorState(c.var.services.db, pending.userId);
    if (state.enabled) {
      const check = await verifySecondFactor(c.var.services, actor, pending.userId, code, clock.now());
      if (!check.ok) {
        await recordSignInFailure(
          c.var.services,
          throttle,
          { username: pending.username, ip },
          pending.userId,
          check.reason === "replayed code" ? "second factor code already used" : "wrong second factor code",
        );
        return page(
          c,
          pending,
          401,
          next,
          check.reason === "replayed code"
            ? "That code was already used: wait for the next one."
            : "That code is not valid.",
        );
      }
      throttle.succeed(pending.username, ip);
      await completeSignIn(c, pending, check.via);
      return c.redirect(next ?? HOME, 303);
    }
    const confirmed = await confirmEnrolment(c.var.services, actor, pending.userId, code, clock.now());
    if (!confirmed.ok) return page(c, pending, 422, next, confirmed.message);
    throttle.succeed(pending.username, ip);
    await completeSignIn(c, pending, "totp");
    return renderPage(c, 200, {
      title: "Recovery codes",
      children: <RecoveryCodes codes={confirmed.recoveryCodes} continueHref={next ?? HOME} />,
    });
  });
}
