import type { Context, Hono } from "hono";
import { changeOwnPassword } from "../../../platform/auth/own-password.ts";
import { webActor } from "../actor.ts";
import type { WebEnv } from "../env.ts";
import { renderPage } from "../layout.tsx";
import { field } from "../login.tsx";

const PATH = "/account/password";

function PasswordForm(props: { csrf: string; error?: string; notice?: string }) {
  return (
    <section class="card narrow">
      <h1>Change your password</h1>
      {props.error && (
        <p class="alert error" role="alert">
          {props.error}
        </p>
      )}
      {props.notice && (
        <p class="alert success" role="status">
          {props.notice}
        </p>
      )}
      <p>Your other sessions end with the change; this one stays.</p>
      <form method="post" action={PATH}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        <label for="current">Current password</label>
        <input type="password" id="current" name="current" autocomplete="current-password" required />
        <label for="password">New password (at least 12 characters)</label>
        <input type="password" id="password" name="password" autocomplete="new-password" minlength={12} required />
        <label for="repeated">New password again</label>
        <input type="password" id="repeated" name="repeated" autocomplete="new-password" minlength={12} required />
        <div class="actions">
          <button type="submit">Change password</button>
        </div>
      </form>
    </section>
  );
}

/** Your own password: a local user changes it with the current one, ending their other sessions. */
export function registerPasswordPage(web: Hono<WebEnv>): void {
  const show = (c: Context<WebEnv>, status: 200 | 401 | 409 | 422, message: { error?: string; notice?: string } = {}) =>
    renderPage(c, status, {
      title: "Change your password",
      session: c.var.session,
      children: <PasswordForm csrf={c.var.session.csrfToken} {...message} />,
    });

  web.get(PATH, (c) => show(c, 200));

  web.post(PATH, async (c) => {
    const session = c.var.session;
    const form = await c.req.parseBody();
    const result = await changeOwnPassword(
      c.var.services.db,
      webActor(session, c.var.clientIp),
      {
        userId: session.userId,
        sessionId: session.sessionId,
        current: field(form, "current"),
        next: field(form, "password"),
        repeated: field(form, "repeated"),
      },
      c.var.services.clock.now(),
    );
    if (!result.ok) return show(c, result.status, { error: result.message });
    const ended = result.endedSessions;
    return show(c, 200, {
      notice: `Password changed; ${ended === 0 ? "you had no other session" : `${ended} other session${ended === 1 ? "" : "s"} ended`}.`,
    });
  });
}
