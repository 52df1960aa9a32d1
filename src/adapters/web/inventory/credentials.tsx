import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { listEnvelope } from "../../../platform/http/list.ts";
import { credentialsResource } from "../../../modules/credentials/index.ts";
import { SNMP_AUTH_PROTOCOLS, SNMP_PRIV_PROTOCOLS } from "../../../modules/credentials/index.ts";
import { plural } from "../../../kernel/words.ts";
import { asApi } from "../api-context.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

type Credential = Record<string, unknown> & { id: number };

const PLAIN = [
  "cred_name",
  "cred_description",
  "cred_username",
  "snmp_v3_user",
  "snmp_v3_auth_protocol",
  "snmp_v3_priv_protocol",
] as const;
/** Write-only fields, each with the `has_` flag the API shows for it. */
const SECRETS = [
  ["cred_password", "Password", "has_password"],
  ["cred_enable_password", "Enable password", "has_enable_password"],
  ["ssh_key", "SSH private key", "has_ssh_key"],
  ["ssh_key_passphrase", "SSH key passphrase", "has_ssh_key_passphrase"],
  ["snmp_community", "SNMP v1/v2c community", "has_snmp_community"],
  ["snmp_v3_auth_password", "SNMPv3 auth password", "has_snmp_v3_auth_password"],
  ["snmp_v3_priv_password", "SNMPv3 privacy password", "has_snmp_v3_priv_password"],
] as const;
const FIELDS: string[] = [...PLAIN, "cred_discovery", ...SECRETS.map(([f]) => f)];

/** The form as the API's body: a secret left empty is kept (left out), "clear" sends null; empty SNMPv3 fields clear. */
function inputOf(form: Form): { input: Record<string, unknown>; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const input: Record<string, unknown> = {};
  for (const f of PLAIN) {
    values[f] = text(form, f) ?? "";
    input[f] = f.startsWith("snmp_v3") && values[f].trim() === "" ? null : values[f];
  }
  values.cred_discovery = text(form, "cred_discovery") === "true" ? "true" : "";
  input.cred_discovery = values.cred_discovery === "true";
  for (const [f] of SECRETS) {
    const v = text(form, f) ?? "";
    if (v) input[f] = v;
    else if (text(form, `clear_${f}`) === "true") input[f] = null;
  }
  return { input, values };
}

function CredentialForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: Record<string, string>;
  existing?: Credential;
  problems?: FieldProblems;
  submit: string;
}) {
  const { values: v, existing, problems: p } = props;
  const Text = (s: { name: string; label: string; hint?: string }) => (
    <Field id={`c-${s.name}`} name={s.name} label={s.label} problems={p} hint={s.hint}>
      <input type="text" id={`c-${s.name}`} name={s.name} value={v[s.name] ?? ""} autocomplete="off" />
    </Field>
  );
  const Protocol = (s: { name: string; label: string; options: readonly string[] }) => (
    <Field id={`c-${s.name}`} name={s.name} label={s.label} problems={p}>
      <select id={`c-${s.name}`} name={s.name}>
        <option value="">None</option>
        {s.options.map((o) => (
          <option value={o} selected={(v[s.name] ?? "").toLowerCase() === o}>
            {o}
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="grid-form entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <Text name="cred_name" label="Name" hint="Unique, e.g. core-routers." />
      <Text name="cred_username" label="Username" />
      <Text name="cred_description" label="Description" />
      <Field
        id="c-cred_discovery"
        name="cred_discovery"
        label="Discovery"
        problems={p}
        hint="Tried when discovery looks for the login of an address (the Discovery page)."
      >
        <label class="check">
          <input
            type="checkbox"
            id="c-cred_discovery"
            name="cred_discovery"
            value="true"
            checked={v.cred_discovery === "true"}
          />{" "}
          Try this set when discovering devices
        </label>
      </Field>
      {SECRETS.map(([name, label, has]) => (
        <Field
          id={`c-${name}`}
          name={name}
          label={label}
          problems={p}
          hint={
            existing
              ? existing[has]
                ? "Stored (never shown). Leave empty to keep it."
                : "None stored."
              : "Write-only: never shown again."
          }
        >
          {name === "ssh_key" ? (
            <textarea
              id={`c-${name}`}
              name={name}
              rows={3}
              class="code"
              placeholder="-----BEGIN OPENSSH PRIVATE KEY-----"
            ></textarea>
          ) : (
            <input type="password" id={`c-${name}`} name={name} autocomplete="new-password" />
          )}
          {existing && existing[has] ? (
            <label class="check">
              <input type="checkbox" name={`clear_${name}`} value="true" /> Clear the stored one
            </label>
          ) : null}
        </Field>
      ))}
      <Text name="snmp_v3_user" label="SNMPv3 user" />
      <Protocol name="snmp_v3_auth_protocol" label="SNMPv3 auth protocol" options={SNMP_AUTH_PROTOCOLS} />
      <Protocol name="snmp_v3_priv_protocol" label="SNMPv3 privacy protocol" options={SNMP_PRIV_PROTOCOLS} />
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href="/credentials">Cancel</a>
      </div>
    </CsrfForm>
  );
}

function formPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  title: string,
  props: Omit<Parameters<typeof CredentialForm>[0], "c">,
) {
  return renderPage(c, status, {
    title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/credentials">Credential sets</a>
        </p>
        <h1>{title}</h1>
        <CredentialForm c={c} {...props} />
      </section>
    ),
  });
}

const DONE: Record<string, string> = {
  created: "Credential set added.",
  saved: "Changes saved.",
  deleted: "Credential set deleted.",
};

const yes = (flag: unknown, what: string) => (flag ? <span class="badge ok">{what}</span> : null);

/**
 * Credential sets through the API's credentials resource: list (secrets shown only as "has password"), add,
 * edit (a secret left empty is kept), delete (refused while devices use the set, as the API refuses it).
 */
export function registerCredentialPages(web: Hono<WebEnv>): void {
  web.get("/credentials", requirePage("credentials.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const q = pageListQuery(c, credentialsResource.listSpec);
    const { total, rows } = await credentialsResource.list(c.var.services.db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const canWrite = c.var.auth.abilities.has("credentials.write");
    const done = DONE[c.req.query("done") ?? ""];
    return renderPage(c, 200, {
      title: "Credential sets",
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Credential sets</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p class="muted">
            How the collector logs in to devices. Secrets are write-only: the page says which are stored, never what
            they are.
          </p>
          {canWrite && (
            <p class="actions">
              <a class="button" href="/credentials/new">
                Add a credential set
              </a>
            </p>
          )}
          <Pager c={c} meta={meta} noun="credential sets" />
          {rows.length ? (
            <div class="table-wrap">
              <table id="credential-list">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Username</th>
                    <th>Stored secrets</th>
                    <th>Used by</th>
                    {canWrite && (
                      <th>
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {(rows as Credential[]).map((r) => (
                    <tr data-id={String(r.id)}>
                      <td>
                        <strong>{String(r.cred_name)}</strong>
                        <div class="muted">{String(r.cred_description)}</div>
                      </td>
                      <td>{String(r.cred_username) || <span class="muted">none</span>}</td>
                      <td class="abilities">
                        {yes(r.has_password, "has password")}
                        {yes(r.has_enable_password, "has enable password")}
                        {yes(r.has_ssh_key, "has SSH key")}
                        {yes(r.has_snmp_community, "has SNMP community")}
                        {yes(r.snmp_v3_user, "SNMPv3")}
                        {yes(r.cred_discovery, "tried by discovery")}
                      </td>
                      <td>{plural(Number(r.devices_count), "device")}</td>
                      {canWrite && (
                        <td>
                          <a href={`/credentials/${r.id}/edit`}>Edit</a>{" "}
                          <a href={`/credentials/${r.id}/delete`}>Delete</a>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">
              No credential set yet. A device needs one (or a login of its own) before it can be backed up.
            </p>
          )}
        </section>
      ),
    });
  });

  web.get("/credentials/new", requirePage("credentials.write"), (c) =>
    formPage(c, 200, "Add a credential set", { action: "/credentials/new", values: {}, submit: "Add credential set" }),
  );

  web.post("/credentials/new", requirePage("credentials.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { input, values } = inputOf(form);
    try {
      await credentialsResource.save(asApi(c), parsedBy(credentialsResource.input, input), null, "create");
      return c.redirect("/credentials?done=created", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a credential set", {
        action: "/credentials/new",
        values,
        problems,
        submit: "Add credential set",
      });
    }
  });

  const existing = (c: Context<WebEnv>) =>
    credentialsResource.show(
      c.var.services.db,
      pathId(c.req.param("id")!, "Credential set"),
      c.var.auth.scope,
    ) as Promise<Credential>;

  web.get("/credentials/:id/edit", requirePage("credentials.write"), async (c) => {
    const cred = await existing(c);
    const values = Object.fromEntries(PLAIN.map((f) => [f, cred[f] == null ? "" : String(cred[f])]));
    values.cred_discovery = cred.cred_discovery ? "true" : "";
    return formPage(c, 200, `Edit ${cred.cred_name}`, {
      action: `/credentials/${cred.id}/edit`,
      values,
      existing: cred,
      submit: "Save changes",
    });
  });

  web.post("/credentials/:id/edit", requirePage("credentials.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const cred = await existing(c);
    const { input, values } = inputOf(form);
    try {
      await credentialsResource.save(asApi(c), parsedBy(credentialsResource.input.partial(), input), cred.id, "patch");
      return c.redirect("/credentials?done=saved", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, `Edit ${cred.cred_name}`, {
        action: `/credentials/${cred.id}/edit`,
        values,
        existing: cred,
        problems,
        submit: "Save changes",
      });
    }
  });

  const confirmPage = (c: Context<WebEnv>, cred: Credential, refusal?: string) =>
    renderPage(c, refusal ? 409 : 200, {
      title: `Delete ${cred.cred_name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete the credential set ${cred.cred_name}?`}</h1>
          {refusal && (
            <p class="alert error" role="alert">
              {refusal}
            </p>
          )}
          <p>{`Devices of yours using it: ${cred.devices_count}. A set that devices still use cannot be deleted: give them other credentials first.`}</p>
          <CsrfForm action={`/credentials/${cred.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the credential set
              </button>
              <a href="/credentials">Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });

  web.get("/credentials/:id/delete", requirePage("credentials.write"), async (c) => confirmPage(c, await existing(c)));

  web.post("/credentials/:id/delete", requirePage("credentials.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const cred = await existing(c);
    try {
      await credentialsResource.remove(asApi(c), [cred.id], false);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return confirmPage(c, cred, err.message);
      throw err;
    }
    return c.redirect("/credentials?done=deleted", 303);
  });
}
