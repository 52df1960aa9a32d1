import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { issueTokenRecorded, revokeTokenRecorded } from "../../../platform/auth/token-audit.ts";
import { revocableToken, visibleTokens, type TokenViewer } from "../../../platform/auth/token-list.ts";
import { tokenState } from "../../../platform/auth/tokens.ts";
import { webActor } from "../actor.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { readForm } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { AbilityGrid, checkTokenForm, grantedAbilities, NewToken, type TokenFormState } from "../settings/tokens.tsx";
import { requirePage } from "../viewer.ts";

const viewerOf = (c: Context<WebEnv>): TokenViewer => ({
  userId: c.var.session.userId,
  isAdmin: c.var.session.isAdmin,
});

/** Only these words come back through an address. */
const DONE: Record<string, string> = {
  revoked: "Token revoked: API requests with it are refused from now on.",
  already: "The token was already revoked.",
};

async function tokensPage(c: Context<WebEnv>, status: ContentfulStatusCode, state: TokenFormState = {}) {
  const viewer = viewerOf(c);
  const rows = await visibleTokens(c.var.services.db, viewer);
  const granted = grantedAbilities(c);
  const now = c.var.services.clock.now();
  const csrf = c.var.session.csrfToken;
  const done = DONE[c.req.query("done") ?? ""];
  return renderPage(c, status, {
    title: "API tokens",
    session: c.var.session,
    children: (
      <>
        {state.created && <NewToken created={state.created} />}
        <section class="card">
          <h1>API tokens</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p class="muted">{`A token lets a script call the REST API as you (${c.var.session.username}), with the abilities ticked below; it can never do more than your role (${c.var.session.roleName}) allows, and it sees only the devices you see. Send it in the apitoken header.`}</p>
          <h2>Create a token</h2>
          {state.errors?.length ? (
            <div class="alert error" role="alert">
              {state.errors.map((e) => (
                <div>{e}</div>
              ))}
            </div>
          ) : null}
          <CsrfForm action="/tokens" csrf={csrf}>
            <label for="token-name">Name</label>
            <input
              type="text"
              id="token-name"
              name="name"
              maxlength={100}
              placeholder="e.g. backup script"
              value={state.name ?? ""}
            />
            <label for="token-expires">Expires on (optional)</label>
            <input type="date" id="token-expires" name="expires_on" value={state.expiresOn ?? ""} />
            <p class="muted">Works through that day (UTC). Empty: the default lifetime in Settings, if one is set.</p>
            <label>Abilities</label>
            <div class="table-wrap">
              <AbilityGrid granted={granted} checked={new Set(state.checked ?? [])} onlyGranted />
            </div>
            <div class="actions">
              <button type="submit">Generate Token</button>
            </div>
          </CsrfForm>
        </section>
        <section class="card">
          <h2>{viewer.isAdmin ? "Every user's tokens" : "Your tokens"}</h2>
          {rows.length === 0 ? (
            <p class="muted">No API tokens yet.</p>
          ) : (
            <div class="table-wrap">
              <table id="token-list">
                <thead>
                  <tr>
                    <th>Name</th>
                    {viewer.isAdmin && <th>Owner</th>}
                    <th>Abilities</th>
                    <th>Created</th>
                    <th>Last used</th>
                    <th>Expires</th>
                    <th>State</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((t) => {
                    const state = tokenState(t, now);
                    return (
                      <tr data-token-id={String(t.id)}>
                        <td>
                          {t.name}
                          <div class="muted mono">{t.prefix}…</div>
                        </td>
                        {viewer.isAdmin && <td>{t.owner}</td>}
                        <td>
                          <div class="abilities">
                            {t.abilities.map((a) => (
                              <code>{a}</code>
                            ))}
                          </div>
                        </td>
                        <td>
                          <Time at={t.createdAt} none="-" />
                        </td>
                        <td>
                          <Time at={t.lastUsedAt} none="never" />
                        </td>
                        <td>
                          <Time at={t.expiresAt} none="never" />
                        </td>
                        <td>
                          <span class={`badge ${state}`}>{state}</span>
                        </td>
                        <td>
                          {state === "active" && (
                            <CsrfForm
                              action={`/tokens/${t.id}/revoke`}
                              csrf={csrf}
                              class="inline"
                              confirm={`Revoke token '${t.name}'? Requests using it are refused from then on.`}
                            >
                              <button type="submit" class="danger">
                                Revoke
                              </button>
                            </CsrfForm>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </section>
      </>
    ),
  });
}

/**
 * API tokens for every logged-in user: their own tokens (an administrator: everyone's), create one with abilities
 * within their role (the value shown once), revoke. The one token page: REST API Access's old API Token tab
 * (`/settings/restapi?tab=api-token`) redirects here.
 */
export function registerTokensPage(web: Hono<WebEnv>): void {
  web.get("/tokens", requirePage(null), (c) => tokensPage(c, 200));

  web.post("/tokens", requirePage(null), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { name, checked, expiresOn, errors, abilities, expiresAt } = await checkTokenForm(c, form);
    if (errors.length) return tokensPage(c, 422, { errors, name, checked, expiresOn });
    const session = c.var.session;
    const token = await issueTokenRecorded(
      c.var.services.db,
      webActor(session, c.var.clientIp),
      { userId: session.userId, name, abilities, expiresAt },
      c.var.services.clock.now(),
    );
    return tokensPage(c, 201, { created: { id: token.id, name, value: token.value, abilities } });
  });

  web.post("/tokens/:id/revoke", requirePage(null), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Token");
    const { db, clock } = c.var.services;
    // Another user's token is, to a non-administrator, a token that does not exist.
    if (!(await revocableToken(db, viewerOf(c), id)))
      return tokensPage(c, 404, { errors: [`There is no token ${id} of yours.`] });
    const revoked = await revokeTokenRecorded(db, webActor(c.var.session, c.var.clientIp), id, clock.now());
    return c.redirect(`/tokens?done=${revoked ? "revoked" : "already"}`, 303);
  });
}
