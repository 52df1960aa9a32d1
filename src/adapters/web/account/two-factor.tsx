import type { Context, Hono } from "hono";
import { verifyPassword } from "../../../platform/auth/passwords.ts";
import {
  beginEnrolment,
  confirmEnrolment,
  removeSecondFactor,
  renewRecoveryCodes,
  secondFactorState,
} from "../../../platform/auth/mfa/second-factor.ts";
import { findUserByName } from "../../../platform/auth/users.ts";
import { webActor } from "../actor.ts";
import type { WebEnv } from "../env.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { field } from "../login.tsx";
import { EnrolmentForm, RecoveryCodes } from "./enrolment.tsx";

const PATH = "/account/two-factor";

/**
 * Your own second factor: turn it on (QR code, first code, recovery codes), renew the recovery codes, or turn it
 * off with your password (not while the policy demands it). Directory users prove themselves to the directory,
 * which owns their second factor, so the page is for local users.
 */
export function registerTwoFactorPage(web: Hono<WebEnv>): void {
  const show = async (
    c: Context<WebEnv>,
    status: 200 | 401 | 409 | 422,
    message?: { error?: string; notice?: string },
  ) => {
    const session = c.var.session;
    const { db, config } = c.var.services;
    const state = await secondFactorState(db, session.userId);
    const user = await findUserByName(db, session.username);
    if (user?.authSource !== "local") {
      return renderPage(c, 200, {
        title: "Second factor",
        session,
        children: (
          <section class="card">
            <h1>Second factor</h1>
            <p>Your account signs in through the directory; its second factor, if any, is the directory's.</p>
          </section>
        ),
      });
    }
    if (!state.enabled) {
      const enrolment = await beginEnrolment(c.var.services, session.userId, config.appName);
      return renderPage(c, status, {
        title: "Second factor",
        session,
        children: (
          <EnrolmentForm
            action={`${PATH}/confirm`}
            csrf={session.csrfToken}
            enrolment={enrolment}
            error={message?.error}
          />
        ),
      });
    }
    return renderPage(c, status, {
      title: "Second factor",
      session,
      children: (
        <section class="card">
          <h1>Second factor</h1>
          {message?.error && (
            <p class="alert error" role="alert">
              {message.error}
            </p>
          )}
          {message?.notice && (
            <p class="alert success" role="status">
              {message.notice}
            </p>
          )}
          <p>
            A code from your authenticator app is asked for at every sign-in.{" "}
            <span class="recovery-left">{state.recoveryCodesLeft} recovery codes left.</span>
          </p>
          <CsrfForm action={`${PATH}/recovery-codes`} csrf={session.csrfToken}>
            <button type="submit">New recovery codes</button>
          </CsrfForm>
          {state.required ? (
            <p class="muted">
              The administrators' policy demands a second factor for your account, so it cannot be turned off.
            </p>
          ) : (
            <CsrfForm action={`${PATH}/disable`} csrf={session.csrfToken}>
              <label for="password">Your password, to turn it off</label>
              <input type="password" id="password" name="password" autocomplete="current-password" required />
              <button type="submit" class="danger">
                Turn off
              </button>
            </CsrfForm>
          )}
        </section>
      ),
    });
  };

  web.get(PATH, (c) => show(c, 200));

  web.post(`${PATH}/confirm`, async (c) => {
    const session = c.var.session;
    const form = await c.req.parseBody();
    const confirmed = await confirmEnrolment(
      c.var.services,
      webActor(session, c.var.clientIp),
      session.userId,
      field(form, "code"),
      c.var.services.clock.now(),
    );
    if (!confirmed.ok) return show(c, 422, { error: confirmed.message });
    return renderPage(c, 200, {
      title: "Recovery codes",
      session,
      children: <RecoveryCodes codes={confirmed.recoveryCodes} continueHref={PATH} />,
    });
  });

  web.post(`${PATH}/recovery-codes`, async (c) => {
    const session = c.var.session;
    const codes = await renewRecoveryCodes(
      c.var.services.db,
      webActor(session, c.var.clientIp),
      session.userId,
      c.var.services.clock.now(),
    );
    if (!codes) return show(c, 409, { error: "You have no second factor: set one up first." });
    return renderPage(c, 200, {
      title: "Recovery codes",
      session,
      children: <RecoveryCodes codes={codes} continueHref={PATH} />,
    });
  });

  web.post(`${PATH}/disable`, async (c) => {
    const session = c.var.session;
    const { db, clock } = c.var.services;
    const state = await secondFactorState(db, session.userId);
    if (state.required)
      return show(c, 409, { error: "The administrators' policy demands a second factor for your account." });
    const form = await c.req.parseBody();
    const user = await findUserByName(db, session.username);
    if (!user || !(await verifyPassword(field(form, "password"), user.passwordHash)))
      return show(c, 401, { error: "Wrong password: the second factor stays on." });
    await removeSecondFactor(db, webActor(session, c.var.clientIp), session.userId, "disabled", clock.now());
    return c.redirect(PATH, 303);
  });
}
