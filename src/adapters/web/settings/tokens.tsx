import { desc, eq } from "drizzle-orm";
import type { Context } from "hono";
import { isAbility, RESOURCES, type Ability } from "../../../platform/auth/abilities.ts";
import { tokenState } from "../../../platform/auth/tokens.ts";
import { apiTokens, roles, users } from "../../../db/schema/index.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { CsrfForm } from "../layout.tsx";

const NAME_MAX = 100;

/** What the create form shows after a submission: the refusal and what was typed, or the new token once. */
export type TokenFormState = {
  errors?: string[];
  name?: string;
  checked?: string[];
  created?: { id: number; name: string; value: string; abilities: string[] };
  notice?: string;
};

export async function grantedAbilities(c: Context<WebEnv>): Promise<Set<string>> {
  const [row] = await c.var.services.db
    .select({ permissions: roles.permissions })
    .from(users)
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(eq(users.id, c.var.session.userId));
  return new Set(row?.permissions ?? []);
}

export function AbilityGrid(props: { granted: Set<string>; checked: Set<string>; onlyGranted?: boolean }) {
  return (
    <table class="ability-grid">
      <thead>
        <tr>
          <th>Resource</th>
          <th>Read</th>
          <th>Write</th>
        </tr>
      </thead>
      <tbody>
        {RESOURCES.filter(
          (r) => !props.onlyGranted || props.granted.has(`${r}.read`) || props.granted.has(`${r}.write`),
        ).map((resource) => (
          <tr>
            <td>{resource}</td>
            {(["read", "write"] as const).map((verb) => {
              const ability = `${resource}.${verb}`;
              if (props.onlyGranted && !props.granted.has(ability)) return <td></td>;
              return (
                <td>
                  <input
                    type="checkbox"
                    name="abilities"
                    value={ability}
                    id={`ability-${ability}`}
                    checked={props.checked.has(ability)}
                    disabled={!props.granted.has(ability)}
                  />{" "}
                  <label for={`ability-${ability}`}>
                    <code>{ability}</code>
                  </label>
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function NewToken(props: { created: NonNullable<TokenFormState["created"]> }) {
  return (
    <section class="card" id="new-token">
      <h2>Token '{props.created.name}' created</h2>
      <p class="alert warning" role="alert">
        Copy this token now. It is shown only once: netkeep stores only a hash of it and cannot show it again.
      </p>
      <div class="secret">
        <code id="new-token-value">{props.created.value}</code>
        <button type="button" class="secondary" data-copy-from="new-token-value">
          Copy
        </button>
      </div>
      <p class="muted">
        Send it in the <code>apitoken</code> header. Abilities: {props.created.abilities.join(", ")}.
      </p>
    </section>
  );
}

/** "Token 'x' revoked" after the revoke form's redirect, from its query parameter. */
export async function revokeNotice(c: Context<WebEnv>): Promise<string | undefined> {
  const [key, text] =
    c.req.query("revoked") !== undefined
      ? ["revoked", "revoked: API requests with it are refused from now on."]
      : c.req.query("already_revoked") !== undefined
        ? ["already_revoked", "was already revoked."]
        : [];
  const id = key ? Number(c.req.query(key)) : NaN;
  if (!Number.isSafeInteger(id)) return undefined;
  const [row] = await c.var.services.db
    .select({ name: apiTokens.name, revokedAt: apiTokens.revokedAt })
    .from(apiTokens)
    .where(eq(apiTokens.id, id));
  // Only a revoked token is said to be: a link naming a live one confirms nothing.
  return row?.revokedAt ? `Token '${row.name}' ${text}` : undefined;
}

/** The API Token tab: every token (admins see all), the create form, and revoke buttons. */
export async function tokenTab(c: Context<WebEnv>, state: TokenFormState = {}) {
  const { db, clock } = c.var.services;
  const now = clock.now();
  const rows = await db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.tokenPrefix,
      owner: users.username,
      abilities: apiTokens.abilities,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      expiresAt: apiTokens.expiresAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .orderBy(desc(apiTokens.id));
  const granted = await grantedAbilities(c);
  const csrf = c.var.session.csrfToken;
  return (
    <div>
      {state.created && <NewToken created={state.created} />}
      {state.notice && (
        <p class="alert success" role="status">
          {state.notice}
        </p>
      )}
      <section class="card">
        <h2>Create a token</h2>
        <p class="muted">
          The token acts as you ({c.var.session.username}) with the abilities ticked below; it can never do more than
          your role allows.
        </p>
        {state.errors?.length ? (
          <div class="alert error" role="alert">
            {state.errors.map((e) => (
              <div>{e}</div>
            ))}
          </div>
        ) : null}
        <CsrfForm action="/settings/restapi/tokens" csrf={csrf}>
          <label for="token-name">Name</label>
          <input
            type="text"
            id="token-name"
            name="name"
            maxlength={NAME_MAX}
            placeholder="e.g. backup script"
            value={state.name ?? ""}
          />
          <label>Abilities</label>
          <AbilityGrid granted={granted} checked={new Set(state.checked ?? [])} />
          <div class="actions">
            <button type="submit">Generate Token</button>
          </div>
        </CsrfForm>
      </section>
      <section class="card">
        <h2>Tokens</h2>
        {rows.length === 0 ? (
          <p class="muted">No API tokens yet.</p>
        ) : (
          <table id="token-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Owner</th>
                <th>Abilities</th>
                <th>Created</th>
                <th>Last used</th>
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
                    <td>{t.owner}</td>
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
                      <span class={`badge ${state}`}>{state}</span>
                      {state === "revoked" && (
                        <div class="muted">
                          <Time at={t.revokedAt} none="" />
                        </div>
                      )}
                    </td>
                    <td>
                      {state === "active" && (
                        <CsrfForm
                          action={`/settings/restapi/tokens/${t.id}/revoke`}
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
        )}
      </section>
    </div>
  );
}

/** The create form's name and abilities, and what is wrong with them (abilities only within the user's role). */
export async function checkTokenForm(c: Context<WebEnv>, form: Record<string, unknown>) {
  const name = typeof form.name === "string" ? form.name.trim() : "";
  const checked = [...new Set(asList(form.abilities))];
  const granted = await grantedAbilities(c);
  const errors: string[] = [];
  if (!name) errors.push("Name is required: say what the token is for, e.g. 'backup script'.");
  else if (name.length > NAME_MAX) errors.push(`Name must be at most ${NAME_MAX} characters.`);
  const unknown = checked.filter((a) => !isAbility(a));
  if (unknown.length) errors.push(`Unknown abilities: ${unknown.join(", ")}.`);
  const beyond = checked.filter((a) => isAbility(a) && !granted.has(a));
  if (beyond.length) errors.push(`Your role does not grant: ${beyond.join(", ")}.`);
  if (!checked.length) errors.push("Tick at least one ability: a token without abilities could not call any endpoint.");
  return { name, checked, errors, abilities: checked as Ability[] };
}

const asList = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string");
