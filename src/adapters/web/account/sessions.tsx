import type { Context, Hono } from "hono";
import { endOtherSessions, endOwnSession, listUserSessions } from "../../../platform/auth/sessions.ts";
import { recordActivity } from "../../../platform/audit/record.ts";
import { webActor } from "../actor.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { CsrfForm, renderPage } from "../layout.tsx";

const PATH = "/account/sessions";

/** Your own sessions: where you are signed in, and a way to end any of them (a browser left signed in elsewhere). */
export function registerSessionsPage(web: Hono<WebEnv>): void {
  const show = async (c: Context<WebEnv>, notice?: string) => {
    const session = c.var.session;
    const list = await listUserSessions(c.var.services.db, session.userId, c.var.services.clock.now());
    return renderPage(c, 200, {
      title: "Your sessions",
      session,
      children: (
        <section class="card">
          <h1>Your sessions</h1>
          {notice && (
            <p class="alert success" role="status">
              {notice}
            </p>
          )}
          <div class="table-wrap">
            <table class="sessions">
              <thead>
                <tr>
                  <th>Signed in</th>
                  <th>Last used</th>
                  <th>Address</th>
                  <th>Browser</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                {list.map((s) => (
                  <tr data-session-id={String(s.id)}>
                    <td>
                      <Time at={s.createdAt} none="" />
                    </td>
                    <td>
                      <Time at={s.lastSeenAt} none="" />
                    </td>
                    <td>{s.ip ?? ""}</td>
                    <td>{s.userAgent ?? ""}</td>
                    <td>
                      {s.id === session.sessionId ? (
                        <span class="muted">this session</span>
                      ) : (
                        <CsrfForm action={`${PATH}/${s.id}/end`} csrf={session.csrfToken} class="inline">
                          <button type="submit" class="danger">
                            End
                          </button>
                        </CsrfForm>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.length > 1 && (
            <CsrfForm action={`${PATH}/end-others`} csrf={session.csrfToken}>
              <button type="submit" class="danger">
                End all other sessions
              </button>
            </CsrfForm>
          )}
        </section>
      ),
    });
  };

  web.get(PATH, (c) => show(c));

  web.post(`${PATH}/end-others`, async (c) => {
    const session = c.var.session;
    const { db, clock } = c.var.services;
    const ended = await db.transaction(async (tx) => {
      const count = await endOtherSessions(tx, session.userId, session.sessionId);
      await recordActivity(
        tx,
        webActor(session, c.var.clientIp),
        {
          action: "user.sessions_end",
          subjectType: "user",
          subjectId: session.userId,
          after: { sessions_ended: count },
        },
        clock.now(),
      );
      return count;
    });
    return show(c, `${ended} other session${ended === 1 ? "" : "s"} ended.`);
  });

  web.post(`${PATH}/:id/end`, async (c) => {
    const session = c.var.session;
    const id = Number(c.req.param("id"));
    const { db, clock } = c.var.services;
    // Only one's own: another user's session id ends nothing and says no more than an unknown one.
    const ended =
      Number.isSafeInteger(id) &&
      (await db.transaction(async (tx) => {
        if (!(await endOwnSession(tx, session.userId, id))) return false;
        await recordActivity(
          tx,
          webActor(session, c.var.clientIp),
          { action: "user.sessions_end", subjectType: "user", subjectId: session.userId, after: { sessions_ended: 1 } },
          clock.now(),
        );
        return true;
      }));
    if (id === session.sessionId && ended) return c.redirect("/login?logged_out", 303);
    return show(c, ended ? "Session ended." : "No such session of yours: it may have ended already.");
  });
}
