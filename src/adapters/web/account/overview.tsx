import type { Hono } from "hono";
import { secondFactorState } from "../../../platform/auth/mfa/second-factor.ts";
import type { WebEnv } from "../env.ts";
import { renderPage } from "../layout.tsx";

/** Your account: who you are signed in as, and the pages about yourself. */
export function registerAccountOverview(web: Hono<WebEnv>): void {
  web.get("/account", async (c) => {
    const session = c.var.session;
    const mfa = await secondFactorState(c.var.services.db, session.userId);
    return renderPage(c, 200, {
      title: "Your account",
      session,
      children: (
        <section class="card">
          <h1>Your account</h1>
          <p>
            Signed in as <strong>{session.username}</strong> with the role <strong>{session.roleName}</strong>
            {session.directory ? " (from the directory)" : ""}.
          </p>
          <ul>
            {!session.directory && (
              <li>
                <a href="/account/password">Change your password</a>
              </li>
            )}
            <li>
              <a href="/account/sessions">Your sessions</a>
            </li>
            <li>
              <a href="/tokens">Your API tokens</a>: create one (with an expiry date, or the default lifetime), or
              revoke one
            </li>
            {!session.directory && (
              <li>
                <a href="/account/two-factor">Second factor</a>:{" "}
                {mfa.enabled ? "on" : mfa.required ? "required, not set up" : "off"}
              </li>
            )}
          </ul>
        </section>
      ),
    });
  });
}
